/**
 * The scripted model: a local fake of the Anthropic Messages API that drives the real `claude` CLI
 * offline, for tests and for the sandbox when no real Claude is available.
 */

export { scriptedClaudeEnv } from './claude-env.js';
export { defaultScript, SCRIPTED_DEMOS } from './default-script.js';
export type { Answer, RecordedRequest, ScriptedModel, ScriptedModelOptions } from './model-options.js';
export type { Reply, ReplyBlock } from './reply.js';
export type { MessagesRequest, RequestKind, RequestView, ToolResult } from './request.js';
export { viewRequest } from './request.js';
export type {
  AgentInput,
  ErrorStep,
  HangStep,
  Matcher,
  Question,
  ReplyOptions,
  Rule,
  Script,
  Step,
  StepSource,
  TurnContext,
} from './script.js';
export {
  agent,
  apiError,
  ask,
  bash,
  callTool,
  hang,
  overloaded,
  rateLimited,
  read,
  reply,
  rule,
  say,
  sendFile,
  sendFiles,
  sendPhoto,
  text,
  thinkThenSay,
  toolUse,
  usageLimited,
  write,
} from './script.js';
export { createScriptedModel } from './scripted-model.js';
