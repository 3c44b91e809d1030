"""Secret scrubbing: every text of a transcript passes `Redactor.redact` before it is rendered,
stored or sent anywhere.

A secret is replaced by `[REDACTED:<kind>]`. For an assignment, a header or a URL only the secret
value is replaced, so the text stays readable: `password=[REDACTED:password]`,
`Authorization: Bearer [REDACTED:bearer]`, `https://user:[REDACTED:password]@host`. Redacting twice
gives the same text as redacting once.

Kinds: anthropic-key, openai-key, github-token, aws-access-key, aws-secret-key, slack-token,
slack-webhook, google-api-key, stripe-key, telegram-bot-token, gitlab-token, npm-token,
huggingface-token, jwt, private-key, bearer, basic-auth, password, secret, token, api-key, and custom
for patterns from config.

How it stays fast over hundreds of MB: one *gate* regex finds trigger words (`sk-`, `token`, `@`, ...),
each keyed on its rarest character so `re` skips the rest in C; only at a trigger do the rules owning it
match and validate in Python. Why, with the figures: bench/RESULTS.md ("Why the code is as it is").
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["REDACTION_RULES", "Redactor", "default_redactor"]

# Bumped whenever a rule changes what is caught: text stored under an older number (or under other
# configured patterns, see `Redactor.rules`) is redacted again, once (core/redaction/upgrade.py).
# 1: the rules before 7c4466e (a key block as an assignment's value kept all but its first word);
# 2: overlapping hits merged, key blocks escaped twice in JSON; 3: a key block's body after a missing BEGIN.
REDACTION_RULES = 3

_Hit = tuple[int, int, str]  # (start, end, kind): the span to replace and its label
_Find = Callable[[str, int], re.Match[str] | None]
_Check = Callable[[re.Match[str]], _Hit | None]

# Characters tried as gate keys, rarest first (measured on the corpus); a trigger is keyed on the
# first of these it contains.
_GATE_PREFERENCE = "@JZzKx_ABPkpCc"
_MIN_TEXT = 6  # the shortest secret caught is a URL password: "://:p@" plus a host
_MARKER = "[REDACTED:"
_MAX_PASSES = 4  # redaction to a fixpoint; a second pass almost never finds more, a third never did


def _marker(kind: str) -> str:
    return f"{_MARKER}{kind}]"


@dataclass(frozen=True, slots=True)
class _Rule:
    """Triggers (literal strings), how to find the match given a trigger's position, and a check
    that turns the match into the span to replace (or None: not a secret after all). `ahead`, given
    the trigger's length, is a regex the gate tests right after the trigger: a necessary condition
    for a match, so that trigger words in prose are dismissed in C rather than in Python."""

    triggers: tuple[str, ...]
    find: _Find
    check: _Check
    ahead: Callable[[int], str] | None = None


# ---------------------------------------------------------------------------------------------
# Value heuristics shared by the rules.

_PLACEHOLDER_WORDS = frozenset(
    """none null nil undefined true false yes no on off string str bytes text number int integer bool
    boolean any unknown object optional required secretstr password passwd pass pwd passphrase secret
    secrets token tokens key apikey api_key api-key changeme change_me placeholder example sample
    redacted hidden masked dummy default empty value env inherit bearer basic""".split()
)
# A value starting with one of these is a reference, template or mask, never a literal secret:
# $VAR ${VAR} <password> {{ x }} [REDACTED:...] (...) %s *** !vault @param :bind #comment ?
_PLACEHOLDER_LEAD = frozenset("$<{[(%*!@:#?&.\u2022")
# "..." elides a value; EXAMPLE marks the AWS documentation keys (AKIAIOSFODNN7EXAMPLE). Searched in
# the lower-cased value.
_PLACEHOLDER_PART = re.compile(
    r"redacted|\*\*\*\*|\.\.\.|your[_-]|your(?:token|key|password|secret)|placeholder|changeme|example"
    r"|<|\$\{|\{\{"
)
# An `xxxx` filler is one case and stands alone or runs long (sk-ant-xxxx, AKIAXXXXXXXXXXXXXXXX,
# xoxb-xxxx-xxxx); a generated token may hold `XxxX` or `dxxxxk` by chance and is still a secret.
_FILLER = re.compile(r"(?<![A-Za-z0-9])(?:x{4,}|X{4,})(?![A-Za-z0-9])|x{8}|X{8}")
_DOTTED_REFERENCE = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")  # self.token, os.environ
_BARE_WORD = re.compile(r"[A-Za-z_]+")  # password=password, token: accessToken
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{40}")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")  # DB_PASSWORD; as a value, a variable named in docs


def _is_placeholder(value: str) -> bool:
    if value[0] in _PLACEHOLDER_LEAD:
        return True
    low = value.lower()
    if low in _PLACEHOLDER_WORDS or _PLACEHOLDER_PART.search(low) or _FILLER.search(value):
        return True
    return len(set(low)) <= 2  # "aaaa", "0000", "----", "xxxxxxxx"


def _looks_like_credential(value: str) -> bool:
    """API keys and tokens are generated: digits, or mixed case at length, or just long. Word-like
    values (`disabled`, `test-key`, `phc_development_key`) are names and settings."""
    if any(c.isdigit() for c in value):
        return True
    return len(value) >= 32 or (len(value) >= 16 and value.lower() != value and value.upper() != value)


def _looks_random(body: str) -> bool:
    """Generated tokens mix letters and digits and vary; prose slugs and `xxxx` fillers do not."""
    return (len(set(body)) >= 6 and any(c.isdigit() for c in body) and any(c.isalpha() for c in body)
            and not _FILLER.search(body))


# ---------------------------------------------------------------------------------------------
# Rules for tokens recognisable by their shape (prefix + alphabet + length).

# Boundaries: a token must not be the middle of a longer word or of a base64 blob; right after a URL's
# "://" it is the user name of basic auth (https://sk_live_...:@api.stripe.com, as Stripe documents it).
_L = r"(?:(?<=://)|(?<![A-Za-z0-9_+/-]))"
_R = r"(?![A-Za-z0-9_-])"


@dataclass(frozen=True, slots=True)
class _TokenShape:
    kind: str
    triggers: tuple[str, ...]
    pattern: str
    weak_prefix: bool = False  # prefix alone is too common: also demand a random-looking body
    ahead: str = ""  # what must follow the trigger (gate look-ahead): keeps `task-` out of Python


_TOKEN_SHAPES: tuple[_TokenShape, ...] = (
    _TokenShape("anthropic-key", ("sk-",), _L + r"sk-ant-[A-Za-z0-9_-]{20,}", ahead=r"[A-Za-z0-9_-]{20}"),
    _TokenShape("openai-key", ("sk-",),
                _L + r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}" + _R, weak_prefix=True,
                ahead=r"[A-Za-z0-9_-]{20}"),
    _TokenShape("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
                _L + r"gh[pousr]_[A-Za-z0-9]{30,255}" + _R, ahead=r"[A-Za-z0-9]{30}"),
    _TokenShape("github-token", ("github_pat_",), _L + r"github_pat_[A-Za-z0-9_]{22,255}" + _R,
                ahead=r"[A-Za-z0-9_]{22}"),
    _TokenShape("aws-access-key", ("AKIA", "ASIA"), _L + r"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])",
                ahead=r"[A-Z0-9]{16}"),
    _TokenShape("slack-token", ("xox",), _L + r"xox[abeoprs]-[A-Za-z0-9-]{10,}" + _R, weak_prefix=True,
                ahead=r"[abeoprs]-[A-Za-z0-9-]{10}"),
    _TokenShape("slack-token", ("xapp-",), _L + r"xapp-\d-[A-Za-z0-9-]{10,}" + _R, ahead=r"\d-"),
    _TokenShape("google-api-key", ("AIza",), _L + r"AIza[0-9A-Za-z_-]{35}" + _R, ahead=r"[0-9A-Za-z_-]{35}"),
    _TokenShape("stripe-key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
                _L + r"[sr]k_(?:live|test)_[0-9A-Za-z]{10,247}" + _R, ahead=r"[0-9A-Za-z]{10}"),
    _TokenShape("gitlab-token", ("glpat-",), _L + r"glpat-[A-Za-z0-9_-]{20,}" + _R, ahead=r"[A-Za-z0-9_-]{20}"),
    _TokenShape("npm-token", ("npm_",), _L + r"npm_[A-Za-z0-9]{36}" + _R, ahead=r"[A-Za-z0-9]{36}"),
    _TokenShape("huggingface-token", ("hf_",), _L + r"hf_[A-Za-z0-9]{34}" + _R, weak_prefix=True,
                ahead=r"[A-Za-z0-9]{34}"),
    # header.payload.signature, both JSON parts base64url of "{"; alg=none tokens have no signature
    _TokenShape("jwt", ("eyJ",), _L + r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
                ahead=r"[A-Za-z0-9_-]{4,}\.eyJ"),
)
_TOKEN_REGEXES: tuple[tuple[_TokenShape, re.Pattern[str]], ...] = tuple(
    (shape, re.compile(shape.pattern)) for shape in _TOKEN_SHAPES
)


def _token_rule(shape: _TokenShape, regex: re.Pattern[str]) -> _Rule:
    def check(m: re.Match[str]) -> _Hit | None:
        body = m.group()
        if len(set(body)) < 8 or _FILLER.search(body) or "example" in body.lower():  # doc examples
            return None
        if shape.weak_prefix and not _looks_random(body.split("-", 1)[-1]):
            return None
        return m.start(), m.end(), shape.kind

    ahead = f"(?={shape.ahead})" if shape.ahead else ""
    return _Rule(shape.triggers, regex.match, check, (lambda _length: ahead) if ahead else None)


_TOKEN_PREFIXES = tuple(trigger for shape in _TOKEN_SHAPES for trigger in shape.triggers)


def _classify_token(value: str) -> str | None:
    """The kind of a known token shape when `value` is exactly one, e.g. an `API_KEY=sk-...`."""
    if len(value) >= 20 and value.startswith(_TOKEN_PREFIXES):
        for shape, regex in _TOKEN_REGEXES:
            if regex.fullmatch(value) and (not shape.weak_prefix or _looks_random(value)):
                return shape.kind
    if ":AA" in value and _TELEGRAM.fullmatch(value):  # TELEGRAM_BOT_TOKEN=<id>:AA...
        return "telegram-bot-token"
    return None


# Telegram bot token: <bot id>:<35 chars>; the secret part always starts with "AA". In API URLs it
# follows "/bot" directly (https://api.telegram.org/bot<token>/getMe).
_TELEGRAM = re.compile(r"(?:(?<=/bot)|(?<![\w:]))\d{8,10}:AA[A-Za-z0-9_-]{33}" + _R)


def _find_telegram(text: str, at: int) -> re.Match[str] | None:
    # the trigger is ":AA"; the bot id digits precede it
    return _TELEGRAM.search(text, max(0, at - 10), at + 3 + 33 + 1)


def _check_telegram(m: re.Match[str]) -> _Hit | None:
    return m.start(), m.end(), "telegram-bot-token"


_SLACK_WEBHOOK = re.compile(
    r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/-]{20,})"
)


def _check_slack_webhook(m: re.Match[str]) -> _Hit | None:
    path = m.group("secret")
    if not _looks_random(path.replace("/", "")):  # T00000000/B00000000/XXXXXXXX in docs
        return None
    return m.start("secret"), m.end("secret"), "slack-webhook"


# A PEM block: BEGIN line, body lines (base64, or headers like "Proc-Type: 4,ENCRYPTED") separated
# by whitespace or JSON-escaped newlines (once or more), END line. Without its END (a truncated output)
# only the newline-separated base64 lines of 20+ characters are taken: shorter ones could be prose. Matching
# line by line, and no header holding a "-----" marker (`note: -----BEGIN ...`), keeps the cost linear
# even for text full of BEGIN lines and no END: a match never runs past the next BEGIN.
_PEM_SEP = r"(?:\\+[nr]|\s)"  # \\n too: a JSON file's text inside a JSON string
_PEM = re.compile(
    r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    rf"(?:(?:{_PEM_SEP}+(?:[A-Za-z0-9+/=]+|[A-Za-z-]{{1,40}}: (?:(?!-----)[^\n\\]){{0,200}}))*{_PEM_SEP}*"
    r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"|(?:(?:\\+[nr]|[\r\n])+[ \t]*[A-Za-z0-9+/=]{20,})*)"
)


def _check_pem(m: re.Match[str]) -> _Hit | None:
    # prose or code that names the markers ("-----BEGIN RSA PRIVATE KEY----- ... -----END") is kept
    return (m.start(), m.end(), "private-key") if _BASE64_RUN.search(m.group()) else None


# A key block's body after its header when the BEGIN is missing: an output cut inside the header line, or
# text stored by releases whose rules replaced only the first word of a key block that was an assignment's
# value (`[REDACTED:aws-secret-key] RSA PRIVATE KEY-----` then the body). The runs of 20+ base64 characters
# that follow, whatever the separator (a handoff joins lines with spaces), up to the next marker.
_PEM_BODY = re.compile(
    rf"PRIVATE KEY(?: BLOCK)?-----(?P<secret>(?:{_PEM_SEP}+[A-Za-z0-9+/=]{{20,}}(?![A-Za-z0-9+/=]))+)"
)


def _check_pem_body(m: re.Match[str]) -> _Hit | None:
    return (m.start("secret"), m.end("secret"), "private-key") if _BASE64_RUN.search(m.group("secret")) else None


# scheme://user:password@host; the trigger is "@" and the scheme separator is found backwards.
# A user name already replaced (https://[REDACTED:stripe-key]:@host) is one piece: its ":" is no separator.
_URL_CREDENTIALS = re.compile(
    r"://(?P<user>\[REDACTED:[a-z0-9-]+\]|(?!\[REDACTED:)[^\s:/@?#\"'<>]{0,256}):(?P<secret>[^\s/@?#\"'<>]{1,256})@"
)


def _find_url_credentials(text: str, at: int) -> re.Match[str] | None:
    start = text.rfind("://", max(0, at - 520), at)
    return None if start < 0 else _URL_CREDENTIALS.fullmatch(text, start, at + 1)


def _url_credentials_ahead(length: int) -> str:
    # a password character before the "@" and a host after it; e-mail addresses still pass
    return r"(?<=[^\s/@]@)(?=[\w\[])"


def _check_url_credentials(m: re.Match[str]) -> _Hit | None:
    password = m.group("secret")
    if _is_placeholder(password) or password in ("pass", "pw", "pwd"):
        return None
    if password.isdigit() and "." in m.group("user"):  # host:port@ seen in URL-confusion examples
        return None
    return m.start("secret"), m.end("secret"), _classify_token(password) or "password"


# ---------------------------------------------------------------------------------------------
# Rules keyed on words, in any case: headers and `name = value` assignments.

# `Bearer <token>` anywhere (curl -H, code, docs). Lower-case `bearer` counts only after an
# Authorization name (next rule): that keeps the frequent letter b out of the gate.
_BEARER = re.compile(
    r"(?<![A-Za-z])(?:Bearer|BEARER)[ \t]+(?P<secret>[A-Za-z0-9._~+/=-]{8,})(?![A-Za-z0-9._~+/=-])"
)
# Authorization: <scheme> <credentials>, any case, as a header, a JSON field or an assignment
_AUTHORIZATION = re.compile(
    r"(?i:authorization)(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?"
    r"(?P<scheme>(?i:basic|bearer|token))[ \t]+(?P<secret>[A-Za-z0-9._~+/=-]{8,})(?![A-Za-z0-9._~+/=-])"
)
_SCHEME_KIND = {"basic": "basic-auth", "bearer": "bearer", "token": "token"}


def _check_bearer(m: re.Match[str]) -> _Hit | None:
    value = m.group("secret")
    # "Bearer authentication" in prose is not a credential: tokens have digits or are long
    if _is_placeholder(value) or not (_looks_random(value) or len(value) >= 32):
        return None
    return m.start("secret"), m.end("secret"), "bearer"


def _check_authorization(m: re.Match[str]) -> _Hit | None:
    value = m.group("secret")
    # the header name is context enough, but not for a variable name (Bearer ACCESS_TOKEN)
    if _is_placeholder(value) or (_ENV_NAME.fullmatch(value) and not any(c.isdigit() for c in value)):
        return None
    scheme = m.group("scheme").lower()
    kind = _SCHEME_KIND[scheme] if scheme != "token" else (_classify_token(value) or "token")
    return m.start("secret"), m.end("secret"), kind


# name, closing quote of a quoted name, operator (or spaces after a --flag), then a quoted or bare
# value. The name prefix (DATABASE_ in DATABASE_PASSWORD) is not matched: only the value is replaced.
_ASSIGNMENT = re.compile(
    r"""
    (?P<kw>(?i:pass(?:word|wd|phrase)?|pwd|secret(?:[_-]?(?:access[_-]?)?key)?|token|key))
    (?P<kq>\\?["'])?
    (?:[ \t]{0,4}(?P<op>:=|=>|=(?!=)|:(?![:/\\]))[ \t]{0,4}|(?P<sp>[ \t]+))
    (?!\\?["'`]?[$<{\[(%*!@:\#?&.\u2022])         # placeholder: see _PLACEHOLDER_LEAD
    (?:(?P<vq>\\?["'`])(?P<qval>[^"'`\s\\]{1,4096})(?P=vq)
      |(?P<uval>[^\s"'`,;&()\[\]{}<>|\\]{1,256}))
    """,
    re.VERBOSE,
)
_KEY_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
# `key` alone names dictionary keys everywhere; only these qualify it as a credential
_KEY_QUALIFIER = re.compile(
    r"(?i:api|app|access|auth|client|consumer|deploy|encryption|license|master|private|secret|service|signing)"
    r"[_-]?\Z"
)
_MIN_VALUE = 4  # shorter assignment values are not secrets (spec); also drops most type names
# An unquoted value is scanned up to 256 characters (so text full of rejected `token=a.b.c...` stays
# linear), and followed to its end only once accepted.
_UNQUOTED_SCAN = 256
_UNQUOTED_REST = re.compile(r"[^\s\"'`,;&()\[\]{}<>|\\]*")


def _key_name_start(text: str, start: int) -> int:
    """Start of the identifier that ends with the keyword at `start` (DATABASE_ of DATABASE_PASSWORD)."""
    i, low = start, max(0, start - 80)
    while i > low and text[i - 1] in _KEY_NAME_CHARS:
        i -= 1
    return i


def _assignment_kind(keyword: str, name: str, value: str) -> str:
    token_kind = _classify_token(value)
    if token_kind:
        return token_kind
    kw, name = keyword.lower(), name.lower()
    if kw.startswith(("pass", "pwd")):
        return "password"
    if kw.startswith("secret"):
        return "aws-secret-key" if "access" in kw or "aws" in name else "secret"
    if kw == "token":
        return "token"
    return "api-key" if "api" in name else ("aws-secret-key" if "aws" in name else "secret")


def _check_assignment(m: re.Match[str]) -> _Hit | None:
    text, start = m.string, m.start()
    keyword = m.group("kw")
    kw = keyword.lower()
    before = text[start - 1] if start else ""
    if kw in ("pass", "pwd") and before.isalpha() and not (keyword[0].isupper() and before.islower()):
        # bypass=, compass: ... but dbPass= (camel case); PGPASSWORD, dbpassword are names
        return None
    name_start = _key_name_start(text, start)
    if text.startswith("://", name_start - 3) and m.group("op") == ":":
        return None  # https://x-access-token:<secret>@host: the URL rule replaces only the password
    prefix = text[name_start:start]
    if kw == "key" and not _KEY_QUALIFIER.search(prefix):
        return None
    is_flag = prefix.startswith("-")
    if m.group("sp") is not None and not is_flag:  # "the password field": prose, not --password x
        return None
    quoted = m.group("qval") is not None
    value = m.group("qval") if quoted else m.group("uval")
    if len(value) < _MIN_VALUE or _is_placeholder(value):
        return None
    if not quoted:
        after = text[m.end()] if m.end() < len(text) else ""
        if after and after in "([":  # password=get_password(), token=os.environ["X"]
            return None
        if _DOTTED_REFERENCE.match(value):  # self.password, process.env.TOKEN
            return None
        if kw == "pass" and not prefix and m.group("op") == ":":  # "--- PASS: TestFoo" test output
            return None
        if kw == "pwd" and value.startswith(("/", "~")):  # PWD=/home/me is the working directory
            return None
        if _BARE_WORD.fullmatch(value):
            # a bare word is a variable (token=token, password: hashed) except on a .env line
            env_line = (m.group("op") == "=" and m.group("kq") is None
                        and text[m.end("kw"):m.start("uval")] == "="
                        and _ENV_NAME.fullmatch(prefix + keyword) is not None)
            if not (env_line or is_flag):
                return None
    kind = _assignment_kind(keyword, prefix, value)
    if kind in ("token", "secret", "api-key") and (value.isdigit() or not _looks_like_credential(value)):
        return None  # counts, ids, names and settings: a password may be a word, a key is not
    start, end = m.span("qval") if quoted else m.span("uval")
    if not quoted and end - start == _UNQUOTED_SCAN:  # the bound keeps rejections cheap; take the rest
        end = _UNQUOTED_REST.match(text, end).end()  # type: ignore[union-attr]  # `.*` always matches
    return start, end, kind


def _assignment_ahead(length: int) -> str:
    # an operator soon after the name (password =, "token":, secret_access_key=), or a --flag and space
    return (rf"(?:(?=[A-Za-z_-]{{0,20}}(?:\\?[\"'])?[ \t]{{0,4}}[:=])"
            rf"|(?<=-.{{{length}}})(?=[A-Za-z_-]{{0,20}}[ \t]))")


def _case_variants(words: Sequence[str]) -> tuple[str, ...]:
    """token -> token, Token, TOKEN: the forms names take in snake, camel and env-var case."""
    return tuple(v for w in words for v in dict.fromkeys((w, w.capitalize(), w.upper())))


_RULES: tuple[_Rule, ...] = (
    *(_token_rule(shape, regex) for shape, regex in _TOKEN_REGEXES),
    _Rule((":AA",), _find_telegram, _check_telegram),
    _Rule(("hooks.slack.com/",), _SLACK_WEBHOOK.match, _check_slack_webhook),
    _Rule(("-----BEGIN",), _PEM.match, _check_pem),
    _Rule(("PRIVATE KEY",), _PEM_BODY.match, _check_pem_body),
    _Rule(("@",), _find_url_credentials, _check_url_credentials, _url_credentials_ahead),
    _Rule(("Bearer", "BEARER"), _BEARER.match, _check_bearer),
    _Rule(_case_variants(["authorization"]), _AUTHORIZATION.match, _check_authorization),
    _Rule(_case_variants(["pass", "pwd", "secret", "token", "key"]), _ASSIGNMENT.match, _check_assignment,
          _assignment_ahead),
)


# ---------------------------------------------------------------------------------------------
# The gate: one regex over all triggers.


def _char_class(chars: set[str]) -> str:
    escaped = "".join(map(re.escape, sorted(chars)))
    return escaped if len(chars) == 1 else f"[{escaped}]"


def _build_gate(rules: Sequence[_Rule]) -> tuple[re.Pattern[str], dict[str, tuple[int, tuple[_Rule, ...]]]]:
    """Returns the gate regex and, per trigger group name, (trigger length, rules to try in order)."""
    owners: dict[str, list[_Rule]] = {}
    for rule in rules:
        for trigger in rule.triggers:
            owners.setdefault(trigger, []).append(rule)
    # Triggers that differ only before their gate character (token/Token, ghp_/gho_) share one
    # alternative whose look-behind has a character class per position: fewer branches to try.
    similar: dict[tuple[str, int, tuple[_Rule, ...]], list[str]] = {}
    for trigger, trigger_rules in owners.items():
        key = next((c for c in _GATE_PREFERENCE if c in trigger), trigger[0])
        at = trigger.index(key)
        similar.setdefault((trigger[at:], at, tuple(trigger_rules)), []).append(trigger)
    branches: dict[str, list[tuple[bool, str]]] = {}
    groups: dict[str, tuple[int, tuple[_Rule, ...]]] = {}
    for n, ((tail, at, rules), triggers) in enumerate(similar.items()):
        rest = re.escape(tail[1:])
        head = "".join(_char_class({t[i] for t in triggers}) for i in range(at))
        behind = f"(?<={head}{re.escape(tail)})" if at else ""
        group = f"t{n}"
        groups[group] = (at + len(tail), rules)
        aheads = [rule.ahead(at + len(tail)) if rule.ahead else "" for rule in rules]
        ahead = "" if "" in aheads else "(?:" + "|".join(aheads) + ")"
        # alternatives that begin with a literal fail fast in C; pure look-behinds go last
        branches.setdefault(tail[0], []).append((not rest, f"{rest}{behind}{ahead}(?P<{group}>)"))
    # most frequent gate characters first: a candidate finds its branch after fewer checks
    frequent_first = sorted(branches, key=lambda c: -_GATE_PREFERENCE.find(c))
    alternation = "|".join(
        re.escape(key) + "(?:" + "|".join(alt for _, alt in sorted(branches[key], key=lambda a: a[0])) + ")"
        for key in frequent_first
    )
    return re.compile(alternation), groups


_GATE, _GATE_GROUPS = _build_gate(_RULES)
_GATE_SEARCH = _GATE.search
_MARKER_SPLIT = re.compile(r"(\[REDACTED:[a-z0-9-]+\])")


def _find_hits(text: str, gate: re.Match[str] | None) -> list[_Hit]:
    """Every rule's hit at every trigger, from the first gate hit on. A trigger inside another rule's
    hit is still tried: `password: -----BEGIN ...` is both an assignment and a key block, and the
    longer one must win. Only a trigger inside the same rule's last hit is skipped (it would match a
    suffix of the same thing), which keeps the work linear in the triggers."""
    hits: list[_Hit] = []
    covered: dict[int, int] = {}  # id(rule) -> end of that rule's last hit
    while gate is not None:
        length, rules = _GATE_GROUPS[gate.lastgroup or ""]
        trigger_start = gate.end() - length
        for rule in rules:
            if trigger_start < covered.get(id(rule), 0):
                continue
            match = rule.find(text, trigger_start)
            hit = rule.check(match) if match is not None else None
            if hit is not None:
                hits.append(hit)
                covered[id(rule)] = hit[1]
        gate = _GATE.search(text, gate.end())
    return hits


def _redact_from(text: str, gate: re.Match[str] | None) -> str:
    """Redacts `text` given the first gate hit in it; returns `text` itself when nothing is replaced.
    Overlapping hits are replaced as one span, named by the longest of them."""
    hits = _find_hits(text, gate)
    if not hits:
        return text  # triggers only: hand back the same object, no copy
    hits.sort(key=lambda hit: (hit[0], -hit[1]))
    pieces: list[str] = []
    done = 0  # text[:done] is settled: copied into pieces or replaced
    span_start, span_end, kind = hits[0]
    widest = span_end - span_start
    for start, end, hit_kind in hits[1:]:
        if start < span_end:  # overlaps the current span: one replacement for both
            if end - start > widest:
                kind, widest = hit_kind, end - start
            span_end = max(span_end, end)
            continue
        pieces += (text[done:span_start], _marker(kind))
        done, (span_start, span_end, kind), widest = span_end, (start, end, hit_kind), end - start
    pieces += (text[done:span_start], _marker(kind), text[span_end:])
    return "".join(pieces)


class Redactor:
    """Replaces secrets in text with `[REDACTED:<kind>]`; see the module docstring."""

    def __init__(self, extra_patterns: Sequence[str] = ()) -> None:
        """`extra_patterns` are regexes from config, redacted as `[REDACTED:custom]`; when one has a
        group named `secret`, only that group is replaced. Empty matches replace nothing. An invalid
        pattern raises ValueError naming it and the regex error."""
        compiled: list[re.Pattern[str]] = []
        for pattern in extra_patterns:
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                raise ValueError(f"invalid redaction pattern {pattern!r}: {exc}") from exc
        self._extra = tuple(compiled)
        digest = hashlib.sha256("\n".join(extra_patterns).encode()).hexdigest()[:12] if extra_patterns else ""
        self.rules = f"{REDACTION_RULES}+{digest}" if digest else str(REDACTION_RULES)

    def might_redact(self, text: str) -> bool:
        """False when `redact(text)` is surely `text` (no trigger word and no configured pattern): one C scan."""
        return bool(self._extra) or (len(text) >= _MIN_TEXT and _GATE_SEARCH(text) is not None)

    def redact(self, text: str) -> str:
        """`text` with every secret found replaced; the same object when there is none."""
        gate = _GATE_SEARCH(text) if len(text) >= _MIN_TEXT else None  # the one scan most texts cost
        if gate is None and not self._extra:
            return text
        # A replacement changes the neighbours of what follows: in `ghp_...-----BEGIN ...` the token
        # fails its boundary on "-" but passes once the key block is a marker. Repeating until nothing
        # changes makes redact(redact(x)) == redact(x); only texts that had a secret pay the rescan.
        for _ in range(_MAX_PASSES):
            redacted = _redact_from(text, gate) if gate is not None else text
            if self._extra and redacted:
                redacted = self._redact_extra(redacted)
            if redacted is text:
                break
            text = redacted
            gate = _GATE_SEARCH(text) if len(text) >= _MIN_TEXT else None
        return text

    def _redact_extra(self, text: str) -> str:
        # markers are left out of the search so a broad pattern cannot eat one (idempotence)
        parts = _MARKER_SPLIT.split(text) if _MARKER in text else [text]
        changed = False
        for i in range(0, len(parts), 2):
            for regex in self._extra:
                replaced = regex.sub(_replace_custom, parts[i])
                changed = changed or replaced != parts[i]  # sub copies even when it kept every match
                parts[i] = replaced
        return "".join(parts) if changed else text


def _replace_custom(m: re.Match[str]) -> str:
    whole = m.group()
    if "secret" in m.re.groupindex:
        start, end = m.span("secret")
        if start == end:  # group absent or empty: nothing to hide
            return whole
        return whole[: start - m.start()] + _marker("custom") + whole[end - m.start():]
    return _marker("custom") if whole else whole  # `x*` also matches between characters


@functools.cache
def default_redactor() -> Redactor:
    """The shared redactor without extra patterns."""
    return Redactor()
