"""Grapheme clusters the cut tests put across a cut (stats titles, previews, search
snippets...): each must be kept whole or left out, never broken."""

#: What a reader sees as one character, made of several code points.
CLUSTERS = {
    "person with a cane, skin tone, facing right": (
        "\U0001f9d1\U0001f3ff\u200d\U0001f9af\u200d\u27a1\ufe0f"
    ),
    "family": "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
    "flags": "\U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea",
    "thumbs up, skin tone": "\U0001f44d\U0001f3fd",
    "keycap": "1\ufe0f\u20e3",
    "e with an acute accent and a dot below": "e\u0301\u0323",
    "Devanagari kshi": "\u0915\u094d\u0937\u093f",
    "heart in emoji form": "\u2764\ufe0f",
}

#: The same without the Indic conjunct, whose parts a conservative rule may part
EMOJI_AND_ACCENTS = {name: text for name, text in CLUSTERS.items() if name != "Devanagari kshi"}
