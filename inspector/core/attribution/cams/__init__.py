"""Class activation maps: Grad-CAM with its layer rule, and EigenCAM."""
