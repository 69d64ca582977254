"""The `attention` site: softmax attention probabilities per head (`site`), worked out for timm's
attention classes from a call's inputs (`timm_classes`).
"""
