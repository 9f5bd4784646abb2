"""Questions for the model's own knowledge or choice that say a tool's words or numbers: pure
functions the embedded model's guidance uses (:func:`reactloop.models._fit.small_talk`) beside
:mod:`reactloop.models._pragmatics`, whose forms they widen in three ways.

- **What a question is about is not what it asks for** (:func:`about_only`). A number that is
  no operand — a count, an age, a rank, a century ("why does an hour have 60 minutes and not
  100?", "a fun fact about the number 7", "explain it to a 10 year old", "a 24-hour clock")
  — is the topic, not a value to act on, when the question holds no arithmetic (an operator,
  an operation said in words, a conversion) and the number is no date, time of day, code,
  numbered thing ("gate 5"), amount of money, percentage or measure a tool converts. A ratio
  that names a kind ("the 80/20 rule") is no division, a quoted word asked about ("why is it
  called a 'layover'?") no text to act on. "What time of year", "what time do most people …"
  ask for a season or a habit, not the clock; "where does X come from" for an origin, not a
  place; "how does X know where I am" for no place; the examples a question gives ("codes
  like LHR or JFK") illustrate, they are no target.
- **A choice asked of the assistant** (:func:`choice`): "X or Y, which would you pick and why?",
  "would you rather …", "do you prefer X or Y?", "explain your choice"; a comparison of two
  alternatives ("is it safer to X or Y?", "which is bigger, X or Y?", "what's heavier, X or
  Y?"); whether one is too old or it is too late to do something, whether a thing is a good
  career or idea — never with a value, the clock (a place with "now", "late", "early"), a
  place to find, a price or the assistant's own data ("your shop").
- **Forms of a question for knowledge** (:func:`knowledge`): how a thing behaves or is done
  ("how do airplanes stay in the air?", "how are X chosen?"; not "how do I …", a way to get,
  go or find, nor how a figure changed), what happens when or if, the origin, history, story
  or reasoning behind something, the past done by others ("how did sailors …", "who named
  …", "the first person to …"), an estimate of a quantity ("how many …, roughly?"), the
  world's, a region's or history's superlatives ("the tallest building in Asia", "in the
  human body"), a norm or advice asked with "should" ("how long should an email be?", "should
  kids …", "what should I write …", not a way, a lookup or a payment), a kind's class ("is a
  tomato a fruit or a vegetable?"), a yes/no about a kind in the plural ("do penguins have
  knees?") and ideas asked for ("list a few fun things to do …"). A capitalised name that is
  neither an acronym, a place nor a region keeps a question in the present about a thing, a
  kind or a superlative for the tools ("does Cafe Aroma serve tea?"): the data may hold it.
"""

from __future__ import annotations

import re

__all__ = ["about_only", "choice", "general_talk", "knowledge", "with_apostrophes"]

_OPERATION = re.compile(
    r"\b(?:add|adding|plus|sum|total|subtract|minus|times|multipl\w*|divid\w*|product|"
    r"quotient|difference|ratio|remainder|modulo|mod|average|mean|percent|per\s*cent|squared?|cubed?|roots?|power|split|half|double|"
    r"triple|convert|converts|converted|converting|conversion|calculat(?:e|es|ed|ing|ion)|"
    r"comput(?:e|es|ed|ing|ation)|in\s+(?:miles|km|kilomet\w+|pounds|lbs|kilos?|kg|"
    r"fahrenheit|celsius)|to\s+(?:miles|km|kilomet\w+|pounds|lbs|kilos?|kg|fahrenheit|celsius))\b",
    re.I)
"""Words of an operation on numbers: a number beside them is an operand."""
_OPERATOR = re.compile(r"\d\s+over\s+\d|\bbetween\s+\d[\d.,]*\s+and\s+\d|\d\s*(?:\*\*|[-+*/×÷^%=<>])\s*\d|[-+*/×÷^=]\s*\d|\d\s*[+*/×÷^=]")
_BARE = re.compile(
    r"(?<![\w.,:/$€£#@-])\d+(?:[.,]\d+)?(?:st|nd|rd|th|s)?(?![\w:/%$€£-]|[.,]\d)"
    r"(?!\s*(?:km|kms|kilomet\w*|miles?|mi|kg|kilos?|kilograms?|pounds?|lbs?|°|degrees?|celsius|"
    r"fahrenheit|%|percent|per\s*cent)\b)", re.I)
"""A number on its own: not part of a date, a time of day, a code, an amount, a path or a
measure a tool converts."""
_COMPOUND = re.compile(r"(?<![\w.,:/-])\d+-(?=(?:hour|day|week|month|year|minute|second|digit|"
                       r"point|step|page|star|piece|person|seat|lane|storey|story|floor)s?\b)",
                       re.I)
"""A number that makes a compound word ("a 24-hour clock", "a 3-step plan")."""
_NUMBERED = re.compile(r"\b(?:gates?|terminals?|orders?|flights?|rooms?|platforms?|seats?|rows?|"
                       r"bus|lines?|routes?|levels?|floors?|piers?|exits?|doors?|stands?|counters?|"
                       r"desks?|buildings?|lanes?|tracks?|halls?|pages?|steps?|items?|no\.?|"
                       r"#)\s*\d", re.I)
"""A number after the noun of a thing numbered ("gate 5", "order 1234"): an identifier."""
_PEOPLE = (r"(?:do|does|did|should|would)\s+(?:most\s+|many\s+|the\s+)?(?:people|folks|locals|"
           r"tourists|travell?ers|kids|children|families|spaniards|italians|germans|americans|"
           r"brits|the\s+french|the\s+japanese)\b")
_NOT_CLOCK = re.compile(r"\bwhat\s+time\s+of\s+(?:the\s+)?(?:year|day|month|season|week|life)\b|"
                        r"\bwhat\s+time\s+(?=" + _PEOPLE + ")", re.I)
"""A season or a habit ("what time of year is best", "what time do most people eat")."""
_ORIGIN = re.compile(r"\bwhere\s+(?:does|do|did)\s+([\w\s'-]{1,40}?)\s+(?:come\s+from|originate|"
                     r"get\s+(?:its|their)\s+name)\b", re.I)
_KNOWS_WHERE = re.compile(r"\b((?:know|knows|knew|tell|tells|figure\s+out|work\s+out|find\s+out|"
                          r"track|tracks)\s+)where\s+(?=(?:i|we|you|they|it|he|she|people)\b)",
                          re.I)
"""Where someone is, said inside a question about how a thing knows it: no place to find."""
_QUOTED = re.compile(r"\b(word|term|name|phrase|expression|saying|idiom|called|named|call|"
                     r"say|means?)\s+(?:(?:a|an|the|it)\s+)?[\"“'‘][^\"”'’]{1,40}"
                     r"[\"”'’]", re.I)
"""A word asked about ("the word 'salary'"): the topic, no text to act on."""
_RATIO = re.compile(r"\b((?:the|a|an)\s+)\d+(?:/\d+)+(?=\s+(?-i:[a-z]))", re.I)
"""A ratio that names a kind ("the 80/20 rule", "a 50/50 chance"): no division."""
_BEST_SPOT = re.compile(r"\bwhere(?:'s|\s+is)\s+the\s+best(?=\s+\w+\s+(?:on|in|at)\s+(?:a|an|any)\s)",
                        re.I)
"""The best spot on a kind of thing ("where's the best seat on a plane?"): advice, no place."""
_EXAMPLES = re.compile(r"\b(?:like|such\s+as|e\.g\.,?|for\s+example)\s+(?-i:[A-Z][\w'-]*)"
                       r"(?:\s*(?:,|or|and)\s*(?-i:[A-Z][\w'-]*))*", re.I)


_STANDARD = re.compile(r"(?<![\w-])((?-i:[A-Z]{2,6}))-?\d{1,4}(?![\w.,:/-])", re.I)
"""A standard or format named with a number ("UTF-8", "MP3", "ISO-8601", "H264"): a name, no
value to act on."""


def about_only(question: str) -> str:
    """``question`` with what it is only about set aside (see the module): numbers that are
    no operand become "some", a season or a habit asked with "what time" becomes "when",
    "where does X come from" an origin, the examples given after "like" / "such as" go."""
    text = " ".join(question.split()).replace("’", "'")
    text = _NOT_CLOCK.sub(lambda m: "what season" if " of " in m.group(0) else "when ", text)
    text = _KNOWS_WHERE.sub(r"\1", text)
    text = re.sub(r"\bhow\s+come\b", "why", text, flags=re.I)
    text = _BEST_SPOT.sub("which is the best", text)
    text = _ORIGIN.sub(r"whence \1 comes", text)
    text = _EXAMPLES.sub("", text)
    text = _QUOTED.sub(r"\1 x", text)
    text = _RATIO.sub(r"\1ratio", text)
    text = _STANDARD.sub(lambda m: m.group(1), text)  # "UTF-8", "MP3": a standard's name
    text = re.sub(r"(?:([,;])\s+|\s+)(?:and|but|so|or)\s+(?=(?:why|how|what|when|which|who)\b)",
                  lambda m: (m.group(1) or ",") + " ", text, flags=re.I)  # "…, and why is it …"
    if _OPERATOR.search(text) or _OPERATION.search(text) or _NUMBERED.search(text):
        return text
    text = _COMPOUND.sub("some-", text)  # "a 12-hour clock": a kind of clock
    return _BARE.sub("some", text)


_PICK = re.compile(
    r"\b(?:which|what)\s+(?:one\s+)?(?:would|do|should|will)\s+you\s+(?:\w+\s+)?(?:pick|choose|"
    r"prefer|go\s+for|take|recommend|get|rather)\b|\bwould\s+you\s+(?:rather|prefer)\b|"
    r"\bdo\s+you\s+(?:prefer|like)\b[^?.!]*\bor\b|\b(?:explain|justify)\s+your\s+(?:choice|"
    r"pick|answer|reasoning)\b|\bif\s+you\s+(?:had|have)\s+to\s+(?:choose|pick)\b|"
    r"\byour\s+(?:pick|choice|preference|favou?rite)\b|\b(?:do\s+you\s+have|have\s+you\s+got|got)\s+"
    r"(?:a|any)\s+(?:favou?rite|plans|hobbies|pets?|joke|good\s+joke|funny\s+joke|riddle)\b|"
    r"(?:^|[,.;:!?]\s+)any\s+(?:plans|hobbies)\b|\bwhich\s+(?:one\s+)?(?:do|would)\s+you\s+(?:find|"
    r"think|consider|say|like|enjoy)\b|\b(?:pick|choose)\s+(?:one|a\s+side)\b|"
    r"\bwhat(?:'s|\s+is)\s+new\s+with\s+you\b|\bhow\s+have\s+you\s+been\b|"
    r"\bdo\s+you\s+(?:like|love|enjoy|hate)\s+(?!to\b)|\b(?:know|got|have|heard)\s+(?:any|a)\s+"
    r"(?:good\s+|funny\s+)?(?:jokes?|riddles?|puns?|fun\s+facts?)\b|"
    r"\bin\s+your\s+(?:view|opinion|experience)\b|\byour\s+(?:view|opinion|take)\b", re.I)
"""A choice asked of the assistant itself."""
_COMPARED = re.compile(
    r"(?:\b(?:is|are|was|would|will)\s+it\s+|^\W*)(?:\w+\s+)?(?:more\s+\w+|less\s+\w+|better|"
    r"worse|\w{3,}er)\s+(?:to|if|when)\b[^?.!]*\bor\b|"
    r"\b(?:is|are)\s+(?:an?\s+|the\s+)?[\w\s'-]{1,30}?\s+(?:too\s+|very\s+|really\s+)?(?:old|young|"
    r"big|small|heavy|tall|short|long|normal|a\s+lot)\s+for\s+(?:a|an)\b|"
    r"\b(?:which|what(?:'s|\s+is|\s+are))\b[^?.!]{0,40}?\b(?:more\s+\w+|less\s+\w+|better|worse|"
    r"\w{3,}er)\b[^?.!]*\bor\b|"
    r"\b(?:is|are|am)\s+(?:it|i|we|they|\w+)\s+(?:\w+\s+)?too\s+(?:late|early|old|young|much|"
    r"many|long|short|far|soon)\s+(?:to|for)\b|"
    r"\b(?:is|are)\b[^?.!]*\b(?:a|an)\s+(?:good|bad|great|smart|wise|sensible|safe)\s+(?:career|"
    r"choice|idea|investment|job|hobby|skill|habit|option|plan|thing|field|degree|place)\b",
    re.I)
"""A comparison of two alternatives ("is it safer to X or Y?", "which is bigger, X or Y?")."""
_NOT_COMPARED = re.compile(r"\b(?:clos|near|farth|furth|cheap|pric|dear|earli|lat)er\b|"
                           r"\b(?:more|less)\s+(?:expensive|costly)\b|\bnumber\b", re.I)
"""A comparison a tool settles: of distance (a place to find), of price (a shop's), of time."""
_VALUE = re.compile(r"\d|(?<!\w)[\"“'‘`]\w|\w[_/.]\w")
_PLACE = re.compile(r"\b(?:where|near|nearby|nearest|closest|around\s+here|close\s+to)\b", re.I)
_CLOCK = re.compile(r"\bwhat\s+time\b|\btime\s+(?:is\s+it\s+)?(?:in|there|now)\b|\bright\s+now\b|"
                    r"\bconvert\b|\bfrom\s+(?-i:[A-Z])[^?.!]*\bto\s+(?-i:[A-Z])|\bhere\b|\bthis\s+"
                    r"(?:airport|terminal|building|station|hotel|shop|store)\b", re.I)
_MOMENT = re.compile(r"\b(?:now|currently|at\s+the\s+moment|yet|late|early|awake|asleep|hour|"
                     r"o'clock)\b", re.I)
"""Words of the present moment or of a time of day: with a place, the clock there."""


_LOOKUP = re.compile(
    r"\byour\s+(?:shop|store|stock|list|records?|database|system|catalog(?:ue)?|menu|prices?)\b|"
    r"\bhow\s+much\b[^?.!]*\b(?:pay|cost|costs|price|charge|fare)\b|"
    r"\b(?:check|look\s+(?:up|in|at|through|into)|search)\b|\b(?:read|open)\s+(?:the|my|our|this|"
    r"that|it|files?|notes|docs?)\b|"
    r"\blist\s+(?:the|my|our|all|every|files?|folders?|contents|what|everything)\b|"
    r"\b(?:the|this|that|these)\s+(?:\w+\s+)?(?:docs?|documents?|files?|notes|folders?|"
    r"spreadsheets?|faq|readme|csv|data|table)\b", re.I)
"""A request to look something up, or a document of the user's said by its kind."""


def _plain(text: str) -> bool:
    """Nothing in ``text`` (already :func:`about_only`) a tool would act on: no value, no place
    to find, no request for the clock, a conversion or a leg between two places, no request to
    look something up or a document of the user's."""
    from reactloop._zones import places_in

    return not (_VALUE.search(text) or _PLACE.search(text) or _CLOCK.search(text)
                or _LOOKUP.search(text) or (_MOMENT.search(text) and places_in(text)))


def choice(question: str) -> bool:
    """Whether ``question`` asks the assistant to choose, or compares two alternatives (see
    the module), about nothing a tool would act on."""
    text = about_only(question)
    if _PICK.search(text):
        return _plain(text)
    return bool(_COMPARED.search(text)) and not _NOT_COMPARED.search(text) and _plain(text)


_PROCESS = re.compile(r"\bhow\s+(?:do|does|did|can|could|is|are|was|were)\s+(?!i\b|we\b|you\b|my\b|"
                      r"our\b|it\s+going\b)([^?.!]+)", re.I)
"""How a thing behaves or is done ("how do airplanes stay in the air?", "how are X chosen?")."""
_WAY = re.compile(r"\bget\b(?!\s+(?:made|done|built|\w+ed)\b)|\b(?:go|reach|find|walk|drive|book\w*|buy|order|say|cost|look|take|do|"
                  r"did|change|changed|grow|grew|perform|compare|rank|sell|sold|drop|rise|rose|"
                  r"increase|decrease|fall|fell)\b|\bfrom\s+\w+\s+to\s+\w+", re.I)
"""A way to get somewhere or something (a route, a search, a booking), or how a figure
changed ("how did revenue change from january to february?"): no process."""
_FROM_ONE = re.compile(r"\b(?:get|go|travel|move)\s+from\s+one\s+\w+\s+to\s+another\b", re.I)
"""How a thing moves from one of a kind to another: a process, no route."""
_FORMS = re.compile(
    r"\bwhat\s+happens\s+(?:to\s+[\w\s'-]{1,30}?\s+)?(?:when|if|after|during)\b|"
    r"\bwhat\s+does\s+it\s+mean\s+(?:when|if|to|that)\b|"
    r"\b(?:origins?|etymology|history|story|invention|the\s+point|the\s+purpose)\s+of\b|\bwhence\b|"
    r"\b(?:story|reason\w*|rationale|idea|logic|history|science|thinking|meaning|motivation)\s+"
    r"behind\b|"
    r"\b(?:in|on|of)\s+(?:the\s+)?(?:world|earth|planet|history|universe|human\s+body|solar\s+"
    r"system|sky|oceans?|sun|moon)\b|\bof\s+all\s+time\b|\bthe\s+universe\b|"
    r"\bwho\s+(?:first\s+)?(?:\w+ed|invented|made|built|wrote|came\s+up\s+with|was\s+the\s+first)\b|"
    r"\bthe\s+first\s+(?:person|people|man|woman|one|country|city|human)\b|"
    r"\b(?:when|who|what|where|how)\s+(?:was|were|did)\b[^?.!]*\bthe\s+(?:first|earliest)\b|"
    r"\bwhat\s+(?:causes|caused|makes|made)\s+(?!me\b|us\b|my\b|our\b)|\bthe\s+causes?\s+of\b|"
    r"\b(?:which|what)(?:'s|\s+is|\s+are)\s+(?:the\s+)?best\s+[\w\s-]{1,20}?\s+(?:on|in|at|for)\s+"
    r"(?:a|an|any)\s|"
    r"^\W*what(?:'s|\s+is|\s+are)\s+(?-i:[A-Z]{2,6})(?:\s+and\b|\s*[,;]|\W*$)|"
    r"\bwhat\s+(?:do|does)\s+(?!you\b|i\b|we\b|they\b|my\b|our\b)[\w\s-]{1,30}?\s+do\b|"
    r"\bwhat\s+(?:was|were)\s+[\w\s'-]{1,30}?\s+like\b|"
    r"^\W*(?:does|do|can|will)\s+(?!i\b|we\b|you\b|my\b|our\b|the\b|this\b|that\b|it\b|"
    r"there\b)\w+\s+(?:\w+\s+)?\w+\s+(?:you|people|us|your\s+body)\b|"
    r"\b(?:which|what)\b[^?.!]*\b(?!(?:cheap|fast|quick|earli|lat|short|soon|clos|near)est\b)"
    r"(?:\w+est|best|worst|most\s+\w+)\s+(?:for|to\s+\w+\s+for)\s+(?:(?:a|an|any)\s+(?:\w+\s+)?"
    r"(?:beginner|child|kid|student|family|couple|person|adult|teenager|senior|novice|learner|"
    r"traveller|traveler|some-year-old)|someone|beginners|kids|children|people|students)\b|"
    r"\bwould\s+(?:suit|fit|be\s+(?:good|best|right|ideal)\s+for)\s+(?:a|an|someone|me)\b|"
    r"\bwhat\s+happened\s+(?:in|during)\s+(?:the\s+)?some\b|"
    r"\b(?:back\s+then|in\s+those\s+days|at\s+the\s+time|in\s+the\s+(?:old\s+days|past))\b|"
    r"^\W*(?:(?:please\s+)?(?:list|name|suggest|share|give\s+me|tell\s+me)\s+(?:some|a\s+few|a\s+"
    r"couple\s+(?:of\s+)?|several)\s+(?:[\w-]+\s+){0,2}?(?:things|ideas|tips|ways|reasons|books|"
    r"films|movies|songs|places|examples|games|activities|hobbies|names|habits|dishes|snacks)\b)|"
    r"\b(?:centur(?:y|ies)|decades?|ancient|medieval)\b|\bwhat\s+season\b|\bwhen\s+" + _PEOPLE + "|"
    r"\btell\s+me\s+(?:a|an|some)\s+(?:\w+\s+)?(?:fact|facts|joke|jokes|story|riddle|trivia)\b|"
    r"\b(?:how|what|when|which)\b[^?.!]*\bshould\s+(?:(?:i|we)\s+(?!(?:get|go)\b(?!\s+(?:him|her|them|for|as|to\s+(?:a|an|any)\b))|"
    r"find\b|reach\b|"
    r"book\b|take\b|leave\b|call\b|email\b|ask\b|open\b|read\b|check\b|use\b|run\b|pay\b|"
    r"spend\b|arrive\b|board\b)|"
    r"(?!i\b|we\b))|^\W*should\s+(?!i\b|we\b|you\b|my\b|our\b|the\b|this\b|that\b|it\b)|"
    r"^\W*(?:is|are)\s+(?:a|an)\s+[\w\s'-]{1,30}?\s+(?:really\s+|actually\s+|technically\s+)?"
    r"(?:a|an|considered)\s", re.I)
"""The forms of a question for knowledge this module adds (see the module)."""
_KIND_ASKED = re.compile(
    r"^\W*(?:do|does|can|could|will|would|did)\s+(?!i\b|we\b|you\b|my\b|our\b|the\b|this\b|"
    r"that\b|these\b|those\b|it\b|they\b|he\b|she\b|your\b|there\b|anyone\b|someone\b)"
    r"(?:most\s+|all\s+|some\s+)?[a-z][\w-]*s\s+\w+", re.I)
"""A yes/no question about a kind said in the plural ("Do airplanes have keys?")."""
_SUPERLATIVE = re.compile(r"\b(?:tallest|oldest|biggest|largest|longest|highest|deepest|smallest|"
                          r"youngest|heaviest|richest|most\s+(?:famous|popular|visited|spoken|"
                          r"common|populous|successful|influential))\b", re.I)
"""The world's superlatives: of size, age or fame, not of a price, a distance or a time."""
_SPECIAL = re.compile(r"\bwhat(?:'s|\s+is|\s+was|\s+were)\s+(?:so\s+)?(?:special|important|"
                      r"significant|interesting|unique)\s+about\b", re.I)
"""What made a thing or a time special ("what was so special about 1969?")."""
_REGIONS_SAID = """Africa Asia Europe America Americas Antarctica Oceania Australia Atlantic
Pacific Arctic Indian Mediterranean Caribbean Sahara Amazon Alps Himalayas"""
_REGIONS = frozenset(_REGIONS_SAID.split())
_ESTIMATE = re.compile(r"\b(?:roughly|approximately|ballpark|give\s+or\s+take|more\s+or\s+less)\b"
                       r"|\babout\s+how\b", re.I)
_QUANTITY = re.compile(r"\bhow\s+(?:many|much|long|far|big|old|tall|high|deep|large|often)\b", re.I)
"""An estimate of a quantity ("How many rivers …, approximately?")."""
_KIND_QUANTITY = re.compile(r"\bhow\s+(?:many|much)\s+(?:[\w-]+\s+){1,4}?(?:does|do|should|can|"
                            r"would|did)\s+(?:an?|the\s+average|(?:most\s+)?(?:people|adults|"
                            r"kids|children|humans))\s+[\w-]+", re.I)
"""A quantity a kind needs or has ("how many hours of sleep does an adult need?")."""
_OWN = re.compile(r"\b(?:my|our|mine|ours)\b", re.I)


_THEIRS = re.compile(
    r"\b(?:my|our)\s+(?:\w+\s+)?(?:body|bodies|brain|health|sleep|skin|eyes|ears|boss|manager|team|"
    r"colleagues?|coworkers?|friends?|family|wife|husband|partner|kids?|children|son|daughter|mum|"
    r"mom|dad|parents?|brother|sister|cat|dog|puppy|kitten|neighbou?rs?|grand(?:ma|pa|mother|"
    r"father|parents?|son|daughter|kids?)|aunt|uncle|cousin|nephew|niece|baby|girlfriend|"
    r"boyfriend)\b", re.I)
"""One's own body, people and pets: what a question is about, nothing a tool holds."""


def _named(text: str) -> bool:
    """Whether ``text`` names something by a capitalised name that is neither an acronym of a
    kind ("GPS", "USB") nor a place with a timezone ("Tokyo"): a name a skill's data may hold."""
    from reactloop._zones import places_in
    from reactloop.models._pragmatics import capitalised_names

    places = {w for place, _ in places_in(text) for w in place.split()}
    return any(not ((len(name) > 1 and name.isupper()) or name in places or name in _REGIONS)
               for name in capitalised_names(text))


def knowledge(question: str) -> bool:
    """Whether ``question`` has a form of a question for knowledge (see the module) about
    nothing a tool would act on: no value, no place to find, no clock, nothing of the
    user's but their body or their kind ("what happens to my body when …")."""
    text = about_only(question)
    process = _PROCESS.search(text)
    estimate = (_ESTIMATE.search(text) and _QUANTITY.search(text)) or _KIND_QUANTITY.search(text)
    kind = _KIND_ASKED.search(text) or _SUPERLATIVE.search(text) or _SPECIAL.search(text)
    if kind and not _FORMS.search(text) and _named(text):
        return False  # "does Cafe Aroma sell tea?", "the biggest shop in Terminal B": the data's
    if not (_FORMS.search(text) or estimate or kind or (
            process and not _WAY.search(_FROM_ONE.sub("", process.group(1))))):
        return False
    present = process and process.group(0).split()[1].lower() not in ("did", "was", "were")
    if present and not _FORMS.search(text) and _named(text):
        return False  # "how does the Sky Lounge work?": a name the data may hold; the past is history
    own = _THEIRS.sub("", text)
    return _plain(text) and not _OWN.search(own)


_KIND_OF = re.compile(r"\b(?:what|which)\s+(?:kind|type|sort|style)s?\s+of\s+[\w\s-]{1,30}?\s+(?:should|"
                      r"would|could|is\s+best|works?\s+best|to\s+(?:use|pick|choose))\b|"
                      r"\b(?:best|right|ideal|proper|most\s+\w+)\s+(?:kind|type|sort|style)s?\s+of\b",
                      re.I)
"""Advice on a kind of thing to choose ("the best kind of chart for showing sales to my
team"): about kinds, not the user's data, even when it says whose the audience is."""


_USED_FOR = re.compile(r"^\W*(?:what(?:'s|\s+is|\s+are)\s+(?:an?\s+|the\s+)?[\w\s-]{1,30}?\s+(?:used|"
                       r"good|for)(?:\s+for)?|what\s+does\s+(?:an?\s+|the\s+)?[\w-]+\s+(?:command\s+|"
                       r"tool\s+|program\s+|app\s+)?do)\s*\??\s*$", re.I)
"""What a thing is for ("What is grep used for?", "what does rsync do?"): knowledge of the
thing, not a request to use it."""


_BARE_CONTRACTIONS = re.compile(r"\b(what|where|who|how|that|there|it)s\b", re.I)


def with_apostrophes(question: str) -> str:
    """``question`` with the apostrophe typed-away contractions restored ("whats": "what's",
    "hows": "how's"), so that the forms of talk read a typed question as a careful one."""
    return _BARE_CONTRACTIONS.sub(r"\1's", question)


def general_talk(question: str) -> bool:
    """Whether ``question`` is the model's own to answer by a form this module adds, or by
    one of :mod:`reactloop.models._pragmatics` once what it is only about is set aside."""
    from reactloop.models._pragmatics import advice, general_question, judgement

    if choice(question) or knowledge(question) or (_USED_FOR.search(question) and _plain(
            question)):
        return True
    text = about_only(question)
    if _KIND_OF.search(text) and _plain(text) and not _named(text):
        return True
    if text == " ".join(question.split()).replace("’", "'"):
        return False  # nothing set aside: the forms of _pragmatics already answered
    return general_question(text) or advice(text) or judgement(text)
