"""The sanity checks of a map (Adebayo et al., NeurIPS 2018): does it change when the model does?

`randomisation.mprt`: model-parameter randomisation, the map made again with the model's layers re-initialised
(`reinit`), cascading from the logits down or one at a time; `random_logit.random_logit`: the map of a randomly
drawn other class. Both compare maps with `scores.similarity`. They make their maps through `entry.attribute`,
so they stand over the methods.
"""
