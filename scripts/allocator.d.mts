// Types of allocator.mjs, for the TypeScript that imports it (the benchmark runs servers with the same setting).
export declare const ALLOCATOR_ENV: { MALLOC_MMAP_THRESHOLD_: string };
export declare function runWithAllocatorSetting(entry: string): Promise<void>;
