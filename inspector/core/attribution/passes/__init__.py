"""How the methods that run in passes run them: how many copies a pass takes (`batching`), the
CPU's memory layout and BatchNorm backward (`layout`), occlusion's regions (`regions`, over `region_graph`)
and the checks a shortcut needs (`checks`). Only the attribution package and the benchmarks import these."""
