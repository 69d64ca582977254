"""Model sources: what a source string names (`refs`), which carry code (`trust`), and the loaders
(`loader.load_model`, one module per family: demo, torchvision_models, timm_models, hf_models,
python_factory, programs) with weights, seeds and checkpoints. `refs`, `trust`, `hf_hub` and
`seeds` are torch-free: the app reads them before the engine has loaded.
"""
