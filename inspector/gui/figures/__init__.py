"""Saved figures: drawn from the data a view holds, never grabbed from the screen (`draw`), with their caption
(`figure`), saved as PNG or SVG (`save`, `svg`, `encoded`); the Graph tab's whole graph (`graph`)."""
