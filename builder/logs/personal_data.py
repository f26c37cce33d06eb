"""Personal data in log text: e-mail addresses, IBANs, payment card numbers and phone numbers.

What is covered follows Microsoft Presidio's predefined recognizers for these kinds
(EmailRecognizer, IbanRecognizer, CreditCardRecognizer, PhoneRecognizer), with the standard
library only: a regular expression finds a candidate, a validator decides.

- IBAN: two letters, two check digits and the country's BBAN length (the SWIFT registry's
  length per country, 15-33 characters), spaced in any groups or not, upper or lower case,
  valid when its mod-97 checksum is 1 (ISO 13616). A wrong check digit is not an IBAN.
- Card: 13-19 digits, contiguous or in the groups cards are printed in (4-4-4-4, 4-6-5, ...),
  starting with a card network's first digit (2-6) at a length that network issues, passing
  the Luhn check; and any four groups of four digits (a card number typed with a typo is still
  one). ISBNs (978/979), tracking and order numbers fail the network or the grouping.
- Phone: a run of digits written as phone numbers are. Always: after `+` or `00` and a
  country code, with a bracketed area code, or North-American 3-3-4 groups (with or without a
  leading `1`: `1-800-555-0199`, `1 (800) 555-0199`, `415.555.0199`); national numbers with a
  trunk `0` (`020 7946 0958`, `06 12 34 56 78`, `030/1234567`, `07700900123`); numbers grouped
  in pairs at the end (`91 123 45 67`). After a phone word (tel, phone, call, mobile, número,
  Telefon, ...): also contiguous digits and groups of three (`612 345 678`). Never: dates,
  IP addresses, numbers grouped in thousands, numbers after an id word (order, invoice,
  tracking, ISBN, ref, serial, ...), digit runs inside a larger token (UUIDs, hashes, versions).
"""

from __future__ import annotations

import re

PLACEHOLDERS = {"email": "[EMAIL]", "phone": "[PHONE]", "card": "[CARD]", "iban": "[IBAN]"}
KINDS = tuple(PLACEHOLDERS)

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                   r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}")

# IBAN length per country (SWIFT IBAN registry).
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28,
    "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
    "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22,
    "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23,
    "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
    "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}
IBAN_CANDIDATE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ \-]?[A-Za-z0-9]){11,31}")

# A run of digits with the separators numbers are written with; classified by `digit_kind`.
DIGIT_RUN = re.compile(r"(?<![\w+#])(?<!\w[\-./])(?:\+\s?)?(?:\(\d{1,5}\)\s?)?\d"
                       r"(?:[ .\-/]?(?:\(\d{1,5}\)[ .\-]?)?\d)*(?![\w])(?![\-/]\w)")
_GROUPS = re.compile(r"\d+")
_CARD_GROUPS = re.compile(r"\d{4}([ -])\d{4}\1\d{4}\1\d{4}")
_DATE = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}")
_DATE_START = re.compile(r"(?:19|20)\d{2}[-./](?:0[1-9]|1[0-2])[-./]"
                         r"|(?:19|20)\d{2} (?:0?[1-9]|1[0-2]) \d{1,2}(?!\d)"
                         r"|\d{1,2}[-./]\d{1,2}[-./](?:19|20)\d{2}(?!\d)")
_NANP = re.compile(r"(?:1[ .\-]?)?\d{3}[ .\-]\d{3}[ .\-]\d{4}")
_BRACKETED = re.compile(r"(?:1[ .\-]?|0\s?)?\(")
_IP = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_PHONE_WORDS = re.compile(
    r"(?i)\b(?:tel|tél|tlf|phone|telephone|téléphone|mobile?|mob|cell|cellphone|call|callback|ring|fax|"
    r"whatsapp|sms|text|contact|reach|dial|number|nr|no|nummer|numéro|número|numero|telefon|"
    r"telefono|teléfono|handy|portable|cellulare|móvil|movil|llamar|llame|appelez|anrufen|"
    r"rufnummer|chiamare)\b\.?")
_ID_WORDS = re.compile(
    r"(?i)\b(?:isbn|issn|order|invoice|tracking|track|ref|reference|serial|sku|part|ticket|case|"
    r"booking|confirmation|transaction|txn|id|po|build|version|v|release|patent|doi|pmid|"
    r"arxiv|barcode|ean|upc|imei|zip|postcode|policy|claim|lot|batch|gtin|orcid|issn)\b\W{0,3}(?:n[or]\.?|#|number)?")


def iban_valid(candidate: str) -> bool:
    """An IBAN (no spaces, any case) whose country length and mod-97 checksum hold."""
    code = candidate.upper()
    if IBAN_LENGTHS.get(code[:2]) != len(code) or not code[2:4].isdigit():
        return False
    moved = code[4:] + code[:4]
    if not moved.isalnum():
        return False
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


def iban_span(match: str) -> int | None:
    """The length of the IBAN at the start of `match` (a greedy IBAN_CANDIDATE match, which
    may run into the next word), or None when there is none."""
    length = IBAN_LENGTHS.get(match[:2].upper())
    if length is None:
        return None
    kept = end = 0
    while end < len(match) and kept < length:
        kept += match[end].isalnum()
        end += 1
    if kept < length:
        return None
    if end < len(match) and match[end].isalnum():
        return None  # the account number goes on: not this country's length
    compact = "".join(ch for ch in match[:end] if ch.isalnum())
    return end if iban_valid(compact) else None


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card_network_length(digits: str) -> bool:
    """Starts as a card network's numbers do (2-6), at a length that network issues."""
    n = len(digits)
    if digits[0] not in "23456":
        return False
    if digits.startswith(("34", "37")):
        return n == 15
    if digits[0] == "4":
        return n in (13, 16, 19)
    if digits[:2] in ("51", "52", "53", "54", "55"):
        return n == 16
    return 14 <= n <= 19


def _card_grouping(groups: list[int]) -> bool:
    """Contiguous, or grouped as cards are printed: 4-4-4-4(-x), 4-6-5, 4-6-4."""
    if len(groups) == 1:
        return True
    if groups[0] != 4:
        return False
    if len(groups) == 3 and groups[1] == 6:
        return groups[2] in (4, 5)
    return all(g == 4 for g in groups[1:-1]) and 1 <= groups[-1] <= 4


def _thousands(run: str, groups: list[int]) -> bool:
    """1 000 000, 123 456 789, 1.234.567: a number grouped in thousands."""
    separators = set(re.sub(r"\d", "", run))
    return (len(separators) == 1 and separators <= {" ", ".", ","} and 1 <= groups[0] <= 3
            and all(g == 3 for g in groups[1:]))


def _nearest(before: str) -> str | None:
    """'phone' or 'id' for the word closest before a number (within 30 characters)."""
    tail = before[-30:]
    phone = max((m.end() for m in _PHONE_WORDS.finditer(tail)), default=-1)
    ident = max((m.end() for m in _ID_WORDS.finditer(tail)), default=-1)
    if phone < 0 and ident < 0:
        return None
    return "phone" if phone > ident else "id"


def digit_kind(run: str, before: str, phones: bool, cards: bool) -> str | None:
    """'card', 'phone' or None for one digit run (see the module docstring); `before` is the
    text before it (the context words)."""
    digits = "".join(ch for ch in run if ch.isdigit())
    n = len(digits)
    if n < 8:
        return None
    context = _nearest(before)
    groups = [len(g) for g in _GROUPS.findall(run)]
    if cards and 13 <= n <= 19 and not run.startswith(("+", "(", "00")) and context != "id":
        if _CARD_GROUPS.fullmatch(run):
            return "card"
        if _card_network_length(digits) and _card_grouping(groups) and luhn_valid(digits):
            return "card"
    if not phones or n > 15:
        return None
    if run.startswith("+"):
        return "phone"
    if _DATE.fullmatch(run) or _DATE_START.match(run) or _IP.fullmatch(run):
        return None
    if context == "id":
        return None
    separated = len(groups) > 1
    if run.startswith("00") and digits[2] != "0" and separated and n >= 10:
        return "phone"
    if _BRACKETED.match(run):
        return "phone"
    if _NANP.fullmatch(run):
        return "phone"
    if digits[0] == "0" and digits[1] != "0" and 9 <= n <= 12:
        if not separated:
            return "phone" if n in (10, 11) else None
        if groups[0] >= 2:
            return "phone"
    if separated and not _thousands(run, groups):
        if len(groups) >= 4 and groups[-1] == groups[-2] == 2 and 9 <= n <= 12:
            return "phone"
        if len(groups) >= 3 and all(2 <= g <= 4 for g in groups) and 10 <= n <= 11:
            return "phone"
    if context == "phone":
        if not separated:
            return "phone" if 9 <= n <= 11 else None
        return "phone" if n <= 13 else None
    return None
