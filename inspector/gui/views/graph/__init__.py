"""The Graph tab: its scene, items, overview, overlay and the view that holds them."""
