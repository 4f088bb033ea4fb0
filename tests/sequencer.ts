/**
 * The order files start in, for one run that holds every project at once. The run takes as long as its
 * longest chain, so the files that take longest (the fault matrices, the soak, then the end-to-end files)
 * start first and the many short unit files fill the workers in the end. Within a project the order is
 * vitest's own: slowest first when it has timings from an earlier run, largest file first on a clean clone.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Lower starts sooner; a project not named here starts with the unit files. */
const START_ORDER: Record<string, number> = { reliability: 0, e2e: 1, processes: 2, unit: 3 };

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => START_ORDER[file.project.name] ?? 3;
    // Array.prototype.sort is stable: vitest's order is kept inside each project.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
