"""The Concepts dock: the bars of an image's concepts, a concept's page, the build dialog, the view that holds them."""
