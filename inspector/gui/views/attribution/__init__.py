"""The Attribution tab: its options, the map and its methods side by side, the faithfulness plot."""
