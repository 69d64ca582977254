"""Two models side by side: the same capture on both (`pair`), compared key by key in forward order (`diff`).
"""
