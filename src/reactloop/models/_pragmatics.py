"""What kind of utterance a question is, from its form rather than its words: pure functions
the embedded model's guidance uses to tell a request for a tool from talk that only shares a
tool's or a skill's words (:func:`reactloop.models._fit.small_talk`).

- **a general question** (:func:`general_question`): "why …", "explain …", "how does X work",
  "what is a X", "what does a X do" about nothing concrete — no number, quote, file or name,
  no place, no capitalised name, nothing of the user's ("my …") — asks for knowledge, which
  the model answers itself ("Can you explain how compound interest is calculated?" is no
  calculation; "Why do we have daylight saving?" no clock);
- **advice** (:func:`advice`): "Can you suggest a name for my puppy?", "Recommend a book for
  my flight." — something the model makes up, about no place and nothing concrete;
- **a statement about oneself** (:func:`self_statement`): a sentence without a question, a
  want or a request, said of oneself ("I work as a data analyst", "just landed after a 12
  hour flight, so tired") is a remark, even with a number in it; so is a question about the
  assistant itself ("Who are you?", "How's your day going?");
- **a greeting** (:func:`greeting`): "hi!", "good morning, sitting at the lounge", "hey!
  big day tomorrow, so excited", "just saying hello", "hope your day is going well", "sounds good, see you later" — a greeting
  or a farewell alone, or with a remark, that asks and wants nothing, is answered in kind,
  whatever tool or skill word it says.

A general question's form includes a comparison of two kinds of thing ("What's the
difference between a layover and a stopover?", "How do a visa and a passport differ?") and
a question said to be general ("…, generally speaking?", "In general, …", "Generally, how
early …?", "In plain words, what does it mean to …?"). A capitalised word after "a" or "an"
is a kind, not a name ("the difference between a CSV file and an Excel sheet").
"""

from __future__ import annotations

import re
from itertools import pairwise

__all__ = ["advice", "anchored", "capitalised_names", "general_question", "greeting",
           "judgement", "self_statement"]

_GENERAL = re.compile(
    r"(?:^|[,.;:!?]\s+)(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|please\s+)?(?:"
    r"explain\b|describe\b|why\b|"
    r"tell\s+me\s+(?:(?:something|anything|a\s+(?:bit|little))\s+(?:\w+\s+)?)?(?:about|why|how)\b|"
    r"how\s+(?:does|do|did)\s+(?!i\b|we\b|you\b)[\w\s'-]{1,40}?\s+work\b|"
    r"what(?:\s+is|\s+are|'s|’s)\s+(?:a|an)\s|"
    r"what\s+(?:does|do)\s+(?:a|an)\s+[\w\s'-]{1,40}?\s+do\b|"
    r"what\s+(?:does|do)\s+(?:a|an|the)\s+(?![\w\s'-]*?\b(?:files?|folders?|docs?|documents?|"
    r"sheets?|spreadsheets?|csv|tables?|reports?|notes?|faq|lists?|workspace|logs?|tools?|skills?|your|cost|price)\b)"
    r"[\w\s'-]{1,40}?\s+(?:actually\s+|really\s+|exactly\s+)?(?:do|record|measure|store|detect|"
    r"track|sense|monitor)(?:\s+(?:exactly|actually|really|anyway))?\s*(?:[?.!]|$)|"
    r"what(?:\s+is|\s+are|'s|’s)\s+the\s+differences?\s+between\b|"
    r"how\s+(?:do|does|is|are)\s+(?!i\b|we\b|you\b)[\w\s'-]{1,50}?\s+(?:differ|different)\b)"
    r"|what\s+does\s+it\s+mean\s+(?:to|when|if)\b|"
    r"\bin\s+(?:plain|simple|layman'?s?)\s+(?:words|terms|english)\b|"
    r"^\W*(?:generally|usually|typically|normally|in\s+general)\s*,"
    r"|\b(?:generally|broadly)\s+speaking\b|\bin\s+general\b", re.I)
"""The forms of a question for knowledge (at the start of a clause), or a question said to
be general."""
_ABOUT_YOU = re.compile(r"\b(?:who|how|what)\b[^?.!]*?\b(?:are\s+you|your(?!\s+(?:shop|store|stock|"
                        r"list|records?|database|system|catalog(?:ue)?|menu|prices?|data|files?|"
                        r"contacts?)\b)|call\s+you|you\s+doing)\b"
                        r"|\bhow(?:'s|’s|\s+is)\s+it\s+going\b", re.I)
"""A question about the assistant itself ("Who are you?", "What is your favourite colour?")."""
_VALUE = re.compile(r"\d|(?<!\w)[\"“'‘`]\w|\w[_/.]\w")
"""A number, a quote or a name (``notes.txt``, ``fi_reporting``): something to act on."""
_OWN = re.compile(r"\b(?:my|our|mine|ours)\b", re.I)


def capitalised_names(text: str) -> list[str]:
    """The capitalised words of ``text`` that do not start a sentence or clause (a name:
    "Cafe Aroma", "Singapore"); "I" is none."""
    def starts(at: int) -> bool:
        before = text[:at].rstrip()
        return not before or before[-1] in ".!?,;:"

    return [m.group(0) for m in re.finditer(r"\b[A-Z][\w'’-]*", text)
            if not starts(m.start()) and m.group(0) not in ("I", "I'm", "I’m", "I've", "I'd")]


def anchored(text: str) -> bool:
    """Whether ``text`` names something concrete a tool could act on: a number, a quote, a
    file or source name, a capitalised name, or a place with a timezone."""
    from reactloop._zones import places_in

    return bool(_VALUE.search(text) or capitalised_names(text) or places_in(text))


_ADVICE = re.compile(
    r"(?:^|[,.;:!?]\s+)(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|please\s+)?(?:"
    r"(?:sugg?est|recomm?end|write|compose)\s+(?:me\s+)?(?:a|an|one|some)\s|any\s+ideas\b|"
    r"what\s+(?:\w+\s+)?should\s+i\s+(?:name|call|learn|read|watch|study|practi[cs]e|use)\b|"
    r"help\s+me\s+plan\b|"
    r"what\s+now\b|any\s+(?:tips|advice)\b)", re.I)
"""A request for advice or for something made up ("Can you suggest a name for my puppy?",
"Write one line of a poem"): the model's own to answer, unless it is about a place."""
_PLACE = re.compile(r"\b(?:where|near|nearby|nearest|closest|around\s+here|close\s+to)\b", re.I)


def advice(question: str) -> bool:
    """Whether ``question`` asks for advice or for something made up (see :data:`_ADVICE`)
    about nothing concrete: no anchor, no place ("near", "where")."""
    text = " ".join(question.split())
    kinds = _KIND.sub(r"\1 kind", text)  # "open a CSV file on a Mac": kinds, no names
    return bool(_ADVICE.search(text)) and not anchored(kinds) and not _PLACE.search(text)


_OWN_ADVICE = re.compile(
    r"(?:^|[,.;:!?]\s+|\b(?:and|so|but)\s+)(?:(?:do|does|should|must|can|would)\s+(?:i|we)\s+|"
    r"(?:do|will)\s+(?:i|we)\s+(?:need|have)\s+to\s+|is\s+it\s+(?:worth|necessary|ok(?:ay)?)\s+)"
    r"[^?.!]*", re.I)
"""A question for advice about the thing just asked of ("…, do I need to print mine?",
"…, should I get one for my trip?"): the user's own copy of it, nothing to look up."""


_KIND = re.compile(r"\b([Aa]n?)\s+[A-Z][\w'’-]*")
"""A capitalised word after an indefinite article: a kind ("an Excel spreadsheet")."""
_PLACE_ASKED = re.compile(r"\b(?:is|are)\s+there\b[^?.!]*?" + _PLACE.pattern + r"|\bwhere\b",
                          re.I)


def general_question(question: str) -> bool:
    """Whether ``question`` asks for knowledge about nothing concrete (see the module):
    the form of a general question, no anchor (:func:`anchored`), nothing of the user's —
    but for a question for advice about the general thing ("what is a boarding pass
    exactly, do I need to print mine?"), no place in it ("where", "near")."""
    text = " ".join(question.split())
    asked = _GENERAL.search(text) or _ABOUT_YOU.search(text)
    kinds = _KIND.sub(r"\1 kind", text)  # "a CSV file": a kind of thing, no name to act on
    if not asked or anchored(kinds) or _PLACE_ASKED.search(text, asked.end()):
        return False  # "what is a lounge, is there one near me?": a place to find
    if (own := _OWN_ADVICE.search(text)) and own.start() > asked.start():
        if _PLACE.search(own.group(0)):
            return False
        text = text[: own.start()]  # "do I need to print mine": advice on the thing asked of
    return not _OWN.search(text)


_QUESTION_WORDS = re.compile(r"\b(?:what|where|when|which|who|whom|whose|why|how)\b", re.I)
_SELVES = """i i'm im i've i'll i'd we we're we've just finally already stuck sitting waiting
bored tired exhausted jetlagged excited nervous killing"""
_SELF = frozenset(_SELVES.split())
_MOODS = """nervous excited tired bored exhausted scared anxious happy glad sad stressed relieved
sleepy hungry thrilled worried haha hahaha lol lmao hehe yay ugh phew"""
_MOOD = frozenset(_MOODS.split())
"""Words of how one feels: after a greeting, a remark ("morning! first flight, kinda nervous")."""
"""First words of a sentence said of oneself (with its subject left out: "just landed")."""
_REQUESTS = """need want like wish wonder wondering looking trying please pls plz can
could would tell show find give help let"""
_REQUEST = frozenset(_REQUESTS.split())
_EXPRESSION = re.compile(r"\d\s*(?:\*\*|[-+*/×÷^%])\s*\d")
_NAME = re.compile(r"(?<!\w)[\"“'‘`]\w|\w[_/.]\w")


_INTERJECTION = re.compile(
    r"^\W*(?:(?:lol|lmao|rofl|ha(?:ha)+|he(?:he)+|omg|omfg|ugh+|argh+|oof|welp|wow|whoa|yikes|"
    r"geez|jeez|sigh|meh|phew|dang|damn|ok(?:ay)?\s+so|so+\s+yeah|oh\s+(?:man|no|boy|dear|god|"
    r"wow)|(?:oh\s+)?well|man)\b[\s,.!:;~-]*)+", re.I)
"""Interjections that open a remark ("lol", "omg", "ugh", "ok so"): no name, no topic."""
_TOLD = re.compile(r"^(?:the|this|that|these|those|someone|somebody|he|she|they|it|it's|its)\b",
                   re.I)
"""A sentence's subject other than oneself ("the neighbour's drill …", "someone just …")."""


def self_statement(question: str) -> bool:
    """Whether ``question`` is a statement about oneself (see the module): it starts with the
    speaker ("I …", "We …", "just landed …"), asks nothing (no question mark or question
    word), wants nothing ("need", "please", "could", "I'd …") and holds no expression, quote
    or file name; numbers are allowed ("a 12 hour flight"). An interjection may open it ("lol
    my dog …", "ugh the printer …": then the subject may be another's)."""
    text = " ".join(question.split()).replace("’", "'")
    if not text or "?" in text or _QUESTION_WORDS.search(text) or _EXPRESSION.search(text):
        return False
    if _NAME.search(text):
        return False
    if _ORDER.search(text):  # "I'm at the plaza, take me to gate 5": a request after it
        return False
    said = _INTERJECTION.match(text)  # "lol my cat just …", "ugh the drill next door …"
    told = bool(said and _TOLD.match(text[said.end():]))
    text = text[said.end():] if said and said.end() < len(text) else text
    words = [w.strip(".,!;:").lower() for w in text.split()]
    own = (words[0] in ("my", "our") or told) and len(words) > 2 and not re.search(r"\d", text)
    habits = {b for a, b in pairwise(words) if a == "never"}  # "i never find"
    return (words[0] in _SELF or own) and not any(  # "my files are a mess lol": a remark
        (w in _REQUEST and w not in habits) or w.endswith("'d") for w in words)


_ORDER = re.compile(r"(?:[,;:.!]|\b(?:so|now|then))\s+(?:take|guide|walk|bring|lead|direct|route|"
                    r"navigate|point|show|mark|pin|draw|list|open|read|check|compute|calculate|"
                    r"convert|book|search|find)\s+(?:me|us|to|my|our|the|a|an|it|this|that|there)\b",
                    re.I)
"""A clause that orders something after a remark about oneself."""


_GREETING = re.compile(r"^\W*(?:hi|hello|hey|hiya|howdy|heya|yo|greetings|good\s+(?:morning|"
                       r"afternoon|evening|day)|morning|evening)\b(?:\s+(?:there|all|again|"
                       r"friend|buddy))?[\s!,.:;)(~-]*", re.I)
_PHATIC = re.compile(r"\b(?:saying|say|said)\s+(?:hi|hello|hey|hiya|howdy)\b|\bjust\s+checking\s+"
                     r"in\b|\bhope\s+(?:you|your|ur)\b|\bhappy\s+(?:monday|tuesday|wednesday|"
                     r"thursday|friday|saturday|sunday|weekend|holidays|new\s+year)\b", re.I)
"""Words that only keep in touch ("just saying hi", "hope your day is going well")."""


_CLOSING = re.compile(
    r"^(?:\W*(?:ok(?:ay)?|cool|great|nice|perfect|awesome|alright|sure|noted|got\s+it|sounds\s+"
    r"(?:good|great)|no\s+worries|cheers|see\s+(?:you|ya)(?:\s+(?:later|soon|tomorrow|around))?|"
    r"take\s+care|talk\s+(?:to\s+you\s+)?(?:later|soon)|catch\s+you\s+later|later|bye(?:\s+for\s+"
    r"now)?|good\s*(?:bye|night)|night)\b)+\W*$", re.I)
"""A message of acknowledgements and farewells only ("sounds good", "see you later",
"cheers!")."""


def greeting(question: str) -> bool:
    """Whether ``question`` is a greeting (see the module): a greeting word alone, a phrase
    that only keeps in touch, or a greeting before a statement about oneself; never with a
    question (other than about the assistant) or a want ("hi, where is gate 2?", "hey, can
    you add 4 and 5?")."""
    text = " ".join(question.split()).replace("’", "'")
    if _CLOSING.match(text):
        return True
    opening = _GREETING.match(text)
    rest = text[opening.end():] if opening else text
    if not opening and not _PHATIC.search(text):
        return False
    if ("?" in text or _QUESTION_WORDS.search(text)) and not _ABOUT_YOU.search(text):
        return False
    words = [w.strip(".,!;:()").lower() for w in text.split()]
    if any(w in _REQUEST or w.endswith("'d") for w in words):
        return False
    if not rest.strip() or _PHATIC.search(text):
        return True
    return self_statement(rest) or (opening is not None and not anchored(rest) and any(
        w in _MOOD for w in words))


_JUDGED = re.compile(
    r"(?:^|[,.;:!?]\s+)\W*(?:is|are|was|were|would|will|does|do|should)\b[^?.!]*?\b(?:rude|"
    r"polite|impolite|customary|expected|normal|usual|common|weird|strange|safe|unsafe|dangerous|"
    r"legal|worth|worthwhile|better|worse|cheaper|healthier|enough|necessary|appropriate|"
    r"overrated|true|a\s+(?:good|bad|smart)\s+idea|a\s+myth)\b|"
    r"\b(?:expensive|crowded|(?:it|weather)\s+(?:\w+\s+)?(?:cold|hot|rainy|sunny|humid))"
    r"(?=\s*(?:[?,.!]|$|in\b|at\b|for\b|during\b))|^\W*does\s+it\s+(?:\w+\s+)?(?:rain|snow)\b",
    re.I)
"""A yes/no question whose answer is a judgement ("Is it rude not to tip in Lisbon?", "Is a
50 minute layover in Frankfurt enough?", "…, or is that a myth?")."""
_VIEWS = re.compile(
    r"(?:^|[,.;:!?]\s+)(?:(?:do|would)\s+you\s+(?:think|say|reckon)\b(?!\s+you\b)|"
    r"in\s+your\s+(?:opinion|view|experience)\b|what(?:'s|\s+is)\s+your\s+(?:opinion|take|view)\b|"
    r"(?:tips|advice)\s+(?:for|on)\b|what\s+helps\b|"
    r"how\s+(?:do|can|should)\s+i\s+(?:cope|deal|survive|stay|avoid|prepare|beat|handle|get\s+"
    r"over|sort|organi[sz]e|back\s*up|tidy|declutter|protect|secure|free\s+up|speed\s+up|"
    r"clean\s+up)\b|(?:what(?:'s|s|\s+is|\s+would\s+be)\s+(?:the|a)\s+(?:\w+\s+)?(?:best|good|sensible|smart|"
    r"easy|easier|simple|quick|better|right|proper|clever|nice|safest|surest|smartest|simplest|"
    r"easiest|safe|reliable)\s+way\s+to|how\s+should\s+(?:i|we))\s+"
    r"(?!get\b|go\b|reach\b|find\b|walk\b)|should\s+(?:i|we)\b|"
    r"what\s+(?:\w+\s+)?should\s+(?:i|we)\s+(?:try|eat|see|do|visit|pack|wear|bring|order|drink|"
    r"buy|expect|know)\b|"
    r"(?:how|why|what|when)?\s*(?:do|did)\s+(?:most\s+)?(?:people|folks|travell?ers|tourists|locals|"
    r"others)\b|who\s+(?:first\s+)?(?:invented|discovered|founded|designed|created)\b|"
    r"how\s+do\s+you\s+say\b|when\s+should\s+(?:i|we)\b|why\s+(?:do|does|did|is|are|was|were)\b|"
    r"what(?:\s+is|\s+are|'s)\s+[\w\s'-]{1,30}?\s+(?:known|famous|renowned)\s+for\b|"
    r"\bworth\s+(?:visiting|seeing|a\s+visit)\b|\bthings\s+to\s+(?:do|see|eat)\b|"
    r"\bbest\s+time\s+(?:of\s+(?:the\s+)?year\s+)?to\s+(?:visit|go|travel)\b)|"
    r"\bbefore\s+(?:\w+\s+){1,4}?(?:was|were|existed|came\s+along)\b|\bhistorically\b|"
    r"\bin\s+(?:the\s+old\s+days|ancient\s+times|the\s+past)\b|"
    r"\b(?:any|some|have|got|your)\s+(?:tips|advice|suggestions|ideas|recommendations|words\s+of\s+"
    r"\w+)\b", re.I)
"""A question for an opinion, advice or what a place or people are like ("Do you think …?",
"any advice for a long flight to Auckland?", "How do people deal with jet lag?", "Why does
China use one time zone?", "What is Lisbon known for?")."""
_SPANS = re.compile(r"\b\d+(?:[.,]\d+)?\s*-?\s*(?:hours?|hrs?|h|minutes?|mins?|days?|weeks?|"
                    r"months?|years?|nights?|%|percent|feet|foot|ft|metres?|meters?|km|kilometres?|"
                    r"kilometers?|miles?|mph|km/h|knots|kg|kilos?|pounds|lbs?|degrees?|°[CF]?)"
                    r"(?!\w)|\b(?:19|20)\d{2}\b", re.I)
"""A duration, a measure or a year: how long, how far, how high or when, nothing to act on ("a
14 hour flight", "like 35000 feet", "in 2027")."""
_START = re.compile(r"\bwhere\s+(?:should|do|does|can|could|would)\s+(?:i|we|one|you|someone|"
                    r"(?:a|an)\s+(?:\w+\s+)?\w+)\s+(?:even\s+)?(?:start|begin)\b(?!\s+(?:in|at|from|near)\b)",
                    re.I)
"""Where to start learning something ("Where should a complete beginner start?"): advice, not
a place to find."""
_REQUESTED = re.compile(r"\bwhat\s+time\b|(?<!all\sthe\s)\btime\s+(?:is\s+it\s+)?(?:in|there|now)\b|"
                        r"\b(?:right\s+)?now\b[^?.!]*\b(?:hour|late|early|there)\b|"
                        r"\b(?:hour|late|early)\b[^?.!]*\b(?:right\s+)?now\b|"
                        r"\bconvert\b[^?.!]*\b(?:time|clock|to\s+(?-i:[A-Z]))|"
                        r"\bfrom\s+(?-i:[A-Z])[^?.!]*\bto\s+(?-i:[A-Z])", re.I)
"""What asks a tool for a place after all: the clock there, a conversion, a leg between two."""
_LIKE = re.compile(r"\bwhat(?:'s|s|\s+is|\s+are)\s+[\w\s'-]{1,30}?\s+like\b", re.I)


def judgement(question: str) -> bool:
    """Whether ``question`` asks for a judgement, an opinion, advice or what a place or people
    are like (:data:`_JUDGED`, :data:`_VIEWS`): the model's own to answer, even about a named
    place or kind ("Tokyo", "PDF files") or with a duration or a year in it — but never with
    another number, a quote, a file name or an expression, a place to find ("where",
    "near"), or a request for the clock, a conversion or a leg between two places."""
    from reactloop._zones import places_in

    text = " ".join(question.split()).replace("’", "'")
    start = bool(_START.search(text))  # "where should a beginner start?": no place
    text = _START.sub("start", text)
    if not (start or _JUDGED.search(text) or _VIEWS.search(text) or (
            _LIKE.search(text) and places_in(text))):
        return False  # "what's Seoul like?": what a place is like
    rest = _SPANS.sub(" ", text)
    return not (_VALUE.search(rest) or _EXPRESSION.search(text) or _PLACE.search(text)
                or _REQUESTED.search(text))
