"""Controllers wire one family of views to the state: edits and Compare, the second model,
analysis (attribution, gradient flow, statistics, the first NaN/Inf, exports), the atlas."""
