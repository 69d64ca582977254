"""The engine's transports for the window, one face whatever carries it: the worker thread in this process (`local`:
`Worker`, with its parts for the atlas, the concepts, the graph and the graph's values) or the engine on another
machine (`remote`: `RemoteWorker` over `network-inspector serve`), and PyTorch's libraries loaded before the worker
imports the engine."""
