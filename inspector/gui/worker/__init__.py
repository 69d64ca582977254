"""The engine's transport for the window in this process: the worker thread (`local`: `Worker`, with its parts for
the atlas, the graph and the graph's values) and PyTorch's libraries loaded before it imports the engine."""
