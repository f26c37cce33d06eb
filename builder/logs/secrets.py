"""Secrets in log text: API keys and tokens of the major providers, private key blocks, JWTs,
bearer tokens, credentials in URLs and secret-looking assignments (`password=...`).

What is covered follows Yelp's detect-secrets plugin set (AWS, Azure storage, Discord,
GitHub, GitLab, JWT, keyword, Mailchimp, npm, OpenAI, private key, PyPI, SendGrid, Slack,
Square, Stripe, Telegram, Twilio, basic auth) plus the prefixes of other providers a RAG system
is likely to log (Anthropic, Google, Hugging Face, Groq, xAI, Databricks, HashiCorp Vault,
Shopify, DigitalOcean). Left out on purpose: detect-secrets' high-entropy string plugins. In
prose and code they flag hashes, UUIDs and ids (the hard negatives of `bench/scrub_labels/`);
a provider's key is recognised by its prefix instead, and an AWS secret key (no prefix) by its
shape: 40 characters of base64 mixing upper case, lower case and digits with high entropy.

Secrets are always scrubbed (a key in a log is never stored, whatever golden.toml says); each
rule belongs to one kind, counted in the import report.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

# kind -> placeholder
PLACEHOLDERS = {
    "private_key": "[PRIVATE_KEY]",
    "jwt": "[JWT]",
    "url_credentials": "[CREDENTIALS]",
    "api_key": "[API_KEY]",
    "aws_secret": "[AWS_SECRET]",
    "bearer": "[TOKEN]",
    "password": "[SECRET]",
}
KINDS = tuple(PLACEHOLDERS)

_L = r"(?<![A-Za-z0-9_\-])"   # a token starts here
_R = r"(?![A-Za-z0-9_\-])"    # ... and ends here

# Provider keys, by prefix (detect-secrets' RegexBasedDetector plugins and the providers' docs).
_PROVIDER_KEYS = [
    r"sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",       # OpenAI, Anthropic, DeepSeek
    r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}",  # AWS key ids
    r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}",                 # GitHub
    r"github_pat_[A-Za-z0-9_]{22,255}",
    r"gl(?:pat|oas|dt|rt|cbt|ptt|ft|imt|agent|soat)-[A-Za-z0-9_\-]{20,50}",  # GitLab
    r"xox[abposrce]-[A-Za-z0-9\-]{10,}",                            # Slack tokens
    r"xapp-\d-[A-Za-z0-9\-]{10,}",
    r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+",
    r"AIza[0-9A-Za-z_\-]{35}",                                      # Google API key
    r"ya29\.[0-9A-Za-z_\-]{20,}",                                   # Google OAuth access token
    r"GOCSPX-[A-Za-z0-9_\-]{20,}",                                  # Google OAuth client secret
    r"(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}",                 # Stripe
    r"whsec_[A-Za-z0-9]{24,}",
    r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}",            # SendGrid
    r"(?:AC|SK)[a-f0-9]{32}",                                       # Twilio
    r"npm_[A-Za-z0-9]{36}",                                         # npm
    r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}",                     # PyPI
    r"hf_[A-Za-z0-9]{30,}",                                         # Hugging Face
    r"gsk_[A-Za-z0-9]{40,}",                                        # Groq
    r"xai-[A-Za-z0-9]{60,}",                                        # xAI
    r"dapi[a-f0-9]{32}",                                            # Databricks
    r"hv[sb]\.[A-Za-z0-9_\-]{24,}",                                 # HashiCorp Vault
    r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",                          # Shopify
    r"do[opr]_v1_[a-f0-9]{64}",                                     # DigitalOcean
    r"sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,60}",                        # Square
    r"[0-9a-f]{32}-us\d{1,2}",                                      # Mailchimp
    r"\d{8,10}:AA[0-9A-Za-z_\-]{33}",                               # Telegram bot
    r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}",  # Discord bot
]

_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\:,\-]*)"
    r"|PuTTY-User-Key-File-\d: .*?(?:Private-MAC: [0-9a-fA-F]+|$)", re.S)
_JWT = re.compile(_L + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*" + _R)
_URL_CREDENTIALS = re.compile(r"(?<=://)[^\s:/?#@\[\]]+:[^\s/?#@\[\]]+(?=@)")
_PROVIDER = re.compile(_L + "(?:" + "|".join(_PROVIDER_KEYS) + ")" + _R)
_AWS_SECRET_NAMED = re.compile(
    r"(?i)(?:aws_?secret(?:_?access)?_?key|secret_?access_?key|aws secret(?: access)? key)"
    r"[\"']?\s*(?:[:=]|=>|\bis\b)?\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_BASE64_40 = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_BEARER = re.compile(r"(?i)\b(?:bearer|basic|token)\s+([A-Za-z0-9\-._~+/]{16,}=*)(?![\w\-.~+/=])")
_ASSIGNMENT = re.compile(
    r"(?i)(?:pass(?:word|wd|phrase)?|pwd|secret|api[_\-]?key|apikey|access[_\-]?key|auth[_\-]?key|"
    r"token|private[_\-]?key|credentials?|contrase(?:ñ|n)a|passwort|mot de passe|senha)"
    r"[A-Za-z0-9_\-.]*[\"'\]]{0,2}"
    r"(?:\s*(?::=|=>|==|[:=])\s*|\s+(?:is|was|ist|es|est|:)\s+|\s+(?=[\"']))"
    r"(?:\"([^\"\s]{4,})\"|'([^'\s]{4,})'|([^\s\"',;&}<>)\]]{6,}))")
# Cheap tests before the rules run (most log text has neither): every key, token and secret
# value above is one run of 16+ characters without spaces (`str.split` finds one faster than
# a regular expression), and an assignment names its key.
_KEYWORDS = ("pass", "pwd", "secret", "key", "token", "credential", "contrase", "senha",
             "mot de passe")
_CODE_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_SYMBOLS = set("!@#$%^&*+=?~/")
_PLACEHOLDER_VALUES = {"null", "none", "true", "false", "redacted", "undefined", "changeme",
                       "password", "secret", "xxxxxx", "******", "example"}


def shannon_entropy(s: str) -> float:
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_like_aws_secret(s: str) -> bool:
    """40 base64 characters that look random: upper, lower and digits, high entropy, few
    slashes (a path of 40 characters has words and slashes, a hex hash one letter case)."""
    return (any(c.isupper() for c in s) and any(c.islower() for c in s)
            and any(c.isdigit() for c in s) and s.count("/") + s.count("+") <= 4
            and shannon_entropy(s) >= 4.3)


def _secret_value(value: str) -> bool:
    """An assigned value that can be a password or key: not a placeholder, not already
    scrubbed, not code (`os.getenv(...)`, `config.password`), not words (`bert-base-uncased`):
    a digit, a symbol or mixed case in it."""
    if value.startswith(("[", "<", "{", "$", "%", "*")) or value.lower() in _PLACEHOLDER_VALUES:
        return False
    if "(" in value or _CODE_REFERENCE.fullmatch(value):
        return False
    if any(c.isdigit() or c in _SYMBOLS for c in value):
        return True
    letters = value.replace("-", "").replace("_", "").replace(".", "")
    return not (letters.islower() or letters.isupper() or letters.istitle())


def scrub_secrets(s: str, count: Callable[[str, int], None]) -> str:
    """`s` with every secret replaced by its kind's placeholder; `count(kind, n)` is told how
    many of each were replaced. Rules run only when their cheap test passes (a log text
    without a long token or a key word costs one regular-expression scan)."""
    if "PRIVATE KEY" in s or "PuTTY" in s:
        s, n = _PRIVATE_KEY.subn(PLACEHOLDERS["private_key"], s)
        count("private_key", n)
    if "://" in s and "@" in s:
        s, n = _URL_CREDENTIALS.subn(PLACEHOLDERS["url_credentials"], s)
        count("url_credentials", n)
    if max(map(len, s.split()), default=0) >= 16:
        if "eyJ" in s:
            s, n = _JWT.subn(PLACEHOLDERS["jwt"], s)
            count("jwt", n)
        s, n = _PROVIDER.subn(PLACEHOLDERS["api_key"], s)
        count("api_key", n)
        s = _replace_group(_AWS_SECRET_NAMED, s, "aws_secret", count)
        s = _replace_group(_BASE64_40, s, "aws_secret", count, _looks_like_aws_secret)
        s = _replace_group(_BEARER, s, "bearer", count, _token_value)
    lower = s.lower()
    if any(k in lower for k in _KEYWORDS):
        s = _replace_group(_ASSIGNMENT, s, "password", count, _secret_value)
    return s


def _token_value(value: str) -> bool:
    """A bearer token has digits or mixed case (not "Bearer authentication-mechanisms")."""
    return any(c.isdigit() for c in value) or (value != value.lower() and value != value.upper())


def _replace_group(pattern: re.Pattern, s: str, kind: str, count: Callable[[str, int], None],
                   valid: Callable[[str], bool] | None = None) -> str:
    """Replace the last non-empty group of each match (or the whole match when it has none)
    that passes `valid`, keeping the text around it ("Bearer [TOKEN]", "password=[SECRET]")."""
    placeholder = PLACEHOLDERS[kind]
    replaced = 0

    def one(m: re.Match) -> str:
        nonlocal replaced
        index = next((i for i in range(pattern.groups, 0, -1) if m.group(i) is not None), 0)
        value = m.group(index)
        if valid is not None and not valid(value):
            return m.group()
        replaced += 1
        start, end = m.start(index) - m.start(), m.end(index) - m.start()
        whole = m.group()
        return whole[:start] + placeholder + whole[end:]

    s = pattern.sub(one, s)
    count(kind, replaced)
    return s
