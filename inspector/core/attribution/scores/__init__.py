"""The scores of a map: the baselines methods start from or fill in, and deletion and insertion."""
