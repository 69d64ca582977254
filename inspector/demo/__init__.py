"""Bundled demo content: a small trained CNN, its synthetic dataset and a toy MLP."""
