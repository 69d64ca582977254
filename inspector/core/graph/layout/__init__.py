"""Where each node of a graph is drawn (torch-free, Qt-free): `graph_layout.GraphLayout` lays a graph out one group
at a time into a `Layout` (boxes, frames, routes), from each level's layered order (`levels`), its coordinates
(`place`) and each box's text and size (`text`)."""
