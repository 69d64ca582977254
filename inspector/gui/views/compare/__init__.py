"""The Compare tab: the grid of runs side by side, the divergence plot and the detector's box changes."""
