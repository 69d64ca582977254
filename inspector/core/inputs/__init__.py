"""Inputs: a file or `sample:NAME` turned into the model's input (`files`), a folder of images stepped
through (`folders`), video files and cameras (`video`), the bundled samples (`samples`). `samples` is
torch-free: the window lists them at once.
"""
