"""Network Inspector: see inside a PyTorch network."""
