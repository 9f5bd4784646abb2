"""What people want, as the kind of place that sells or offers it (a neutral module of pure
data, read by :mod:`reactloop._ranking` and the embedded model's guidance): "aspirin" is sold
where the data says ``medicine`` or ``pharmacy``, "a latte" where it says ``coffee``, "somewhere
quiet" is a ``lounge``. A skill whose data holds none of a question's own words still holds the
kind of place that has what the question wants ("a bottle of whisky before my flight": the
airport's shop of ``liquor``, not a booking).

The table is everyday vocabulary, each word with the usual names of such a place, most
specific first; a word maps only where the place is the usual answer to wanting it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["bare_kinds", "kinds"]

_COFFEE = ("coffee", "cafe")
_MEDICINE = ("medicine", "pharmacy", "chemist", "drugstore")
_DOCTOR = ("doctor", "first aid", "clinic", "medical")
_LIQUOR = ("liquor", "duty free", "alcohol")
_GIFTS = ("duty free", "perfume", "shopping", "gift", "souvenir")
_READING = ("books", "magazines", "newspapers", "bookshop")
_LOST = ("lost and found", "information", "info", "help")
_BAGS = ("bag drop", "check-in", "baggage")
_REST = ("lounge", "quiet")
_BABY = ("baby changing", "changing", "nursing", "family")
_RIDE = ("taxi", "transport", "car rental", "rental")

_WANTS: Mapping[str, tuple[str, ...]] = {
    **dict.fromkeys(("latte", "espresso", "cappuccino", "americano", "macchiato", "flat white",
                     "mocha", "tea", "caffeine", "pastry", "croissant", "muffin"), _COFFEE),
    **dict.fromkeys(("aspirin", "painkiller", "painkillers", "paracetamol", "ibuprofen",
                     "headache", "plaster", "plasters", "bandage", "bandaid", "sunscreen",
                     "allergy", "tablets", "pills", "cough", "medication", "prescription",
                     "contact lens", "toothpaste", "toothbrush"), _MEDICINE),
    **dict.fromkeys(("sick", "unwell", "ill", "injured", "hurt", "dizzy", "faint", "bleeding",
                     "nurse", "fever"), _DOCTOR),
    **dict.fromkeys(("whisky", "whiskey", "wine", "vodka", "gin", "rum", "spirits", "booze",
                     "champagne", "brandy", "cognac", "tequila"), _LIQUOR),
    **dict.fromkeys(("cologne", "fragrance", "cosmetics", "makeup", "cigarettes", "tobacco",
                     "chocolates", "present", "gift", "souvenir", "souvenirs"), _GIFTS),
    **dict.fromkeys(("newspaper", "magazine", "novel", "paperback", "reading",
                     "crossword"), _READING),
    **dict.fromkeys(("wallet", "purse", "passport", "keys", "lost", "missing", "misplaced"), _LOST),
    **dict.fromkeys(("suitcase", "suitcases"), _BAGS),
    **dict.fromkeys(("quiet", "relax", "nap", "sleep", "rest", "peaceful", "calm"), _REST),
    **dict.fromkeys(("diaper", "diapers", "nappy", "nappies", "breastfeed", "breastfeeding"),
                    _BABY),
    **dict.fromkeys(("cab", "uber"), _RIDE),
    **dict.fromkeys(("thirsty", "refill"), ("water", "fountain")),
    **dict.fromkeys(("hungry", "starving"), ("food", "restaurant")),
    **dict.fromkeys(("shower", "freshen"), ("showers", "lounge")),
}


def kinds(word: str) -> tuple[str, ...]:
    """The usual names of the place that has what ``word`` (lower case) says one wants, or
    none."""
    return _WANTS.get(word, ())


_BARE: Mapping[str, tuple[str, ...]] = {
    "eat": ("food", "restaurant"), "drink": ("coffee", "food"), "sleep": _REST, "rest": _REST,
    "sit": _REST, "shop": ("shop", "shopping"), "wash": ("restroom", "toilet"),
}
_BARE_VERB = re.compile(rf"\b({'|'.join(_BARE)})\b(?=\s*(?:[?.!,;]|$|\s+(?:before|after|near|in|at|"
                        r"around|here|nearby|while|during|please)\b))", re.I)
"""A verb said without its object ("anywhere to eat?", "somewhere to sit near gate 4")."""


def bare_kinds(question: str) -> tuple[str, ...]:
    """The usual names of the place for a verb ``question`` says without its object ("anything
    to eat?": a place of ``food``; "to eat dumplings" says what, not where), or none."""
    m = _BARE_VERB.search(question)
    return _BARE[m.group(1).lower()] if m else ()
