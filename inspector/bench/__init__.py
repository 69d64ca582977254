"""The benchmarks users can run: the engine against plain PyTorch, and the app itself."""
