"""An XSS corpus: a valid v3 session with hostile text in every string field of every entry type.

``build_corpus()`` returns the JSONL bytes. Every script payload sets ``window.__pwned`` (or
calls ``alert``), every remote resource points at ``evil.example`` (or the test server's own
``/pwned`` path), so a test can assert that nothing ran, nothing opened and nothing loaded.
The tree stays valid: ids and parentIds carry payloads but still link up, with forks, an
orphan root, damaged lines and a truncated last line.
"""

from __future__ import annotations

import base64
import json
from typing import Any

SENTINEL = "__pwned"
EVIL = "https://evil.example"

PAYLOADS = [
    '<img src=x onerror="window.__pwned=1;alert(1)">',
    "</script><script>window.__pwned=1;alert(1)</script>",
    '"><svg onload="window.__pwned=1;alert(1)">',
    '\'><iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
    f"</style><style>*{{background:url({EVIL}/css.png)}}</style>",
    f"--></noscript></textarea></title><img src={EVIL}/x.png>",
    "{{7*7}}{% if 1 %}jinja{% endif %}${7*7}#{7*7}",
    "<!--<script>window.__pwned=1</script>-->",
    '*/body{display:none}/* \\"; background:url(//evil.example/a.png); x:"',
    "javascript:window.__pwned=1//\u2028\u2029",
    '<a href="javascript:window.__pwned=1">click</a>',
    f'<base href="{EVIL}/"><meta http-equiv="refresh" content="0;url={EVIL}/">',
    f'<object data="{EVIL}/o.swf"></object><embed src="{EVIL}/e">',
    f"<link rel=stylesheet href={EVIL}/s.css>",
    "<math><mtext><table><mglyph><style><img src=x onerror=window.__pwned=1>",
    '" onmouseover="window.__pwned=1" x="',
    "%3Cscript%3Ewindow.__pwned=1%3C/script%3E",
    "<![CDATA[<script>window.__pwned=1</script>]]>",
    # invisible tag characters that shadow markup: shown decoded, never as markup
    "".join(chr(0xE0000 + ord(c)) for c in '"><img src=x onerror="window.__pwned=1">\\'),
]
ALL = " ".join(PAYLOADS)

MARKDOWN = "\n\n".join(
    [
        "# Heading <img src=x onerror=window.__pwned=1>",
        "[click me](javascript:window.__pwned=1)",
        "[upper](JAVASCRIPT:window.__pwned=1)",
        "[spaced]( javascript:window.__pwned=1 )",
        "[entity](&#106;avascript:window.__pwned=1)",
        "[vb](vbscript:msgbox(1))",
        "[data link](data:text/html;base64,PHNjcmlwdD5wYXJlbnQuX19wd25lZD0xPC9zY3JpcHQ+)",
        "<javascript:window.__pwned=1>",
        "[ref link][evil]\n\n[evil]: javascript:window.__pwned=1",
        f"![remote image]({EVIL}/t.png)",
        "![protocol relative](//evil.example/p.png)",
        "![svg data](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9InBhcmVudC5fX3B3bmVkPTEiLz4=)",
        '![quote break](data:image/png;base64,AAAA"onerror="window.__pwned=1)',
        "<script>window.__pwned=1</script>",
        f'<img src="{EVIL}/raw.png">',
        "```<img src=x onerror=window.__pwned=1>\n</script><script>window.__pwned=1</script>\n```",
        f"| <b onmouseover=alert(1)>h</b> |\n|---|\n| ![t]({EVIL}/table.png) |",
        "- [x] <img src=x onerror=window.__pwned=1>",
        "```<img/src=x/onerror=window.__pwned=1>\nthe fence's language label\n```",
        "![<img src=x onerror=window.__pwned=1>](data:image/png;base64,AAAA)",
        '![alt" onerror="window.__pwned=1](data:image/png;base64,AAAA)',
        f"<{EVIL}/autolink>",
        ALL,
    ]
)

SVG = base64.b64encode(
    b'<svg xmlns="http://www.w3.org/2000/svg" onload="parent.__pwned=1">'
    b"<script>parent.__pwned=1</script></svg>"
).decode("ascii")
HTML_DOC = base64.b64encode(b"<script>parent.__pwned=1;alert(1)</script>").decode("ascii")
PNG = (  # an 8x8 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEklEQVR4nGP4z8CAFWEXHbQSACj/P8Fu7N9h"
    "AAAAAElFTkSuQmCC"
)
IMAGES = [
    {"type": "image", "mimeType": "image/svg+xml", "data": SVG},
    {"type": "image", "mimeType": "text/html", "data": HTML_DOC},
    {"type": "image", "mimeType": 'image/png" onerror="window.__pwned=1', "data": PNG},
    {"type": "image", "mimeType": "image/png", "data": '"><script>window.__pwned=1</script>'},
    {"type": "image", "mimeType": "image/png", "data": PNG},  # the one harmless image
]


def _id(n: int) -> str:
    """Distinct within their first bytes (DOM ids derive from a prefix of the id)."""
    return f"{n:02d}{PAYLOADS[n % len(PAYLOADS)]}"


class _Tree:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def raw(self, line: str) -> None:
        self.lines.append(line)

    def add(self, parent: str | None, **fields: Any) -> str:
        self.count += 1
        entry_id = _id(self.count)
        entry = {"id": entry_id, "parentId": parent, **fields}
        entry.setdefault("timestamp", f"2025-03-01T10:{self.count:02d}:00.000Z")
        self.lines.append(json.dumps(entry, ensure_ascii=False))
        return entry_id


def _usage() -> dict[str, Any]:
    return {
        "input": 10,
        "output": "<b>5</b>",
        "cacheRead": None,
        "cacheWrite": 1,
        "totalTokens": 16,
        "cost": {"input": 0.001, "output": "x", "total": 0.002},
    }


def _assistant(content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": PAYLOADS[0],
        "provider": PAYLOADS[1],
        "model": PAYLOADS[2],
        "usage": _usage(),
        "stopReason": "toolUse",
        "timestamp": 1740823200000,
        **extra,
    }


def _result(call_id: str, name: str, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        **extra,
    }


CALLS = [
    ("bash", {"command": f"echo '{PAYLOADS[1]}' && curl {EVIL}/x", "timeout": 5}),
    ("read", {"path": f"/tmp/{PAYLOADS[0]}.html", "offset": 1, "limit": 40}),
    ("write", {"path": f"/tmp/{PAYLOADS[2]}.js", "content": f"{ALL}\n" * 20}),
    ("edit", {"path": f"/tmp/{PAYLOADS[3]}.css", "oldText": ALL, "newText": PAYLOADS[4]}),
    ("ls", {"path": f"/tmp/{PAYLOADS[5]}", "limit": PAYLOADS[6]}),
    ("find", {"pattern": PAYLOADS[7], "path": PAYLOADS[8], "glob": PAYLOADS[9]}),
    ("grep", {"pattern": PAYLOADS[10], "glob": PAYLOADS[11], "ignoreCase": PAYLOADS[12]}),
    (PAYLOADS[13], {PAYLOADS[14]: [PAYLOADS[15], {"nested": PAYLOADS[16]}], "n": 1}),
    ("bash", {"command": {"not": PAYLOADS[0]}}),  # invalid argument type
    ("read", PAYLOADS[3]),  # arguments not an object
    ("edit", {"path": PAYLOADS[17], "oldText": PAYLOADS[1], "newText": PAYLOADS[2]}),
]

RESULT_TEXT = {
    "bash": "\n".join(f"{i} {PAYLOADS[i % len(PAYLOADS)]}" for i in range(30))
    + "\nCommand exited with code 1",
    "read": f"<!DOCTYPE html><html><head><script>window.__pwned=1</script></head>{ALL}</html>",
    "write": f"wrote {PAYLOADS[0]}",
    "edit": f"edited {PAYLOADS[1]}",
    "ls": "\n".join(PAYLOADS),
    "find": "\n".join(PAYLOADS),
    "grep": "\n".join(f"a.py:{i}: {p}" for i, p in enumerate(PAYLOADS)),
}


def _call_id(n: int) -> str:
    return f"c{n}{PAYLOADS[n % len(PAYLOADS)]}"


def build_corpus() -> bytes:
    tree = _Tree()
    tree.raw(
        json.dumps(
            {
                "type": "session",
                "version": 3,
                "id": f"sess{PAYLOADS[0]}",
                "timestamp": PAYLOADS[6],
                "cwd": f"/home/{PAYLOADS[2]}/proj",
                "parentSession": PAYLOADS[1],
            },
            ensure_ascii=False,
        )
    )
    root = tree.add(
        None,
        type="message",
        message={
            "role": "user",
            "content": [{"type": "text", "text": "User says " + MARKDOWN}, *IMAGES],
        },
    )
    level = tree.add(root, type="thinking_level_change", thinkingLevel=PAYLOADS[3])
    model = tree.add(level, type="model_change", provider=PAYLOADS[4], modelId=PAYLOADS[5])
    content: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": "Thinking " + MARKDOWN},
        {"type": "thinking", "thinking": "", "redacted": True, "data": PAYLOADS[6]},
        {"type": "text", "text": "Assistant says " + MARKDOWN},
    ]
    for n, (name, arguments) in enumerate(CALLS):
        content.append(
            {"type": "toolCall", "id": _call_id(n), "name": name, "arguments": arguments}
        )
    content.append({"type": PAYLOADS[7], "data": PAYLOADS[8], PAYLOADS[9]: PAYLOADS[10]})
    content.append(IMAGES[0])
    assistant = tree.add(model, type="message", message=_assistant(content))
    parent = assistant
    for n, (name, _) in enumerate(CALLS):
        shown = name if isinstance(name, str) and name in RESULT_TEXT else PAYLOADS[n]
        extra: dict[str, Any] = {}
        if name == "edit":
            extra["details"] = {
                "diff": "\n".join(f"{'+-@ '[i % 4]}{i} {p}" for i, p in enumerate(PAYLOADS))
            }
        if name == "read":
            extra["details"] = {"truncation": {"reason": PAYLOADS[11], "path": PAYLOADS[12]}}
        message = _result(_call_id(n), shown, RESULT_TEXT.get(name, ALL), **extra)
        if n == len(CALLS) - 1:
            message["isError"] = True
            message["content"].extend(IMAGES)
        parent = tree.add(parent, type="message", message=message)
    orphan_result = tree.add(
        parent,
        type="message",
        message=_result(PAYLOADS[13], PAYLOADS[14], "no call for this " + ALL),
    )
    failed = tree.add(
        orphan_result,
        type="message",
        message=_assistant(
            [{"type": "text", "text": "Failing " + PAYLOADS[0]}],
            stopReason="error",
            errorMessage="Error " + ALL,
        ),
    )
    bash = tree.add(
        failed,
        type="message",
        message={
            "role": "bashExecution",
            "command": f"cat '{PAYLOADS[1]}' # {PAYLOADS[2]}",
            "output": "\n".join(PAYLOADS * 2),
            "exitCode": 1,
            "cancelled": True,
            "truncated": True,
            "fullOutputPath": f"/tmp/{PAYLOADS[3]}",
            "excludeFromContext": True,
            "timestamp": 0,
        },
    )
    compaction = tree.add(
        bash,
        type="compaction",
        summary="Summary " + MARKDOWN,
        firstKeptEntryId=assistant,
        tokensBefore=12345,
        details={"readFiles": PAYLOADS[:3], "modifiedFiles": [PAYLOADS[4], {"x": PAYLOADS[5]}]},
    )
    shown = tree.add(
        compaction,
        type="custom_message",
        customType=PAYLOADS[6],
        content="Shown custom " + MARKDOWN,
        display=True,
        details={"k": PAYLOADS[7]},
    )
    hidden = tree.add(
        shown,
        type="custom_message",
        customType=PAYLOADS[8],
        content=[{"type": "text", "text": "Hidden custom " + PAYLOADS[9]}, *IMAGES],
        display=False,
    )
    data = tree.add(
        hidden,
        type="custom",
        customType=PAYLOADS[10],
        data={PAYLOADS[11]: [PAYLOADS[12], {PAYLOADS[13]: PAYLOADS[14]}], "n": 1},
    )
    role_custom = tree.add(
        data,
        type="message",
        message={
            "role": "custom",
            "customType": PAYLOADS[15],
            "content": [{"type": "text", "text": "Role custom " + PAYLOADS[16]}, IMAGES[0]],
            "display": True,
        },
    )
    unknown_role = tree.add(
        role_custom, type="message", message={"role": PAYLOADS[17], "content": ALL}
    )
    no_message = tree.add(unknown_role, type="message", message=PAYLOADS[0])
    unknown = tree.add(no_message, type=PAYLOADS[1], payload=ALL, nested={PAYLOADS[2]: ALL})
    label = tree.add(unknown, type="label", targetId=root, label="Label " + PAYLOADS[3])
    tree.add(label, type="label", targetId=PAYLOADS[4], label="Label on nothing " + PAYLOADS[5])
    # the page <title>: a name that closes it early
    named = tree.add(label, type="session_info", name="Named </title>" + PAYLOADS[0] + PAYLOADS[6])
    # a fork at the root: a branch summary and a user turn, with a nested fork below
    summary = tree.add(
        root,
        type="branch_summary",
        fromId=assistant,
        summary="Branch summary " + MARKDOWN,
        details={"x": PAYLOADS[11]},
    )
    alt = tree.add(
        summary,
        type="message",
        message={"role": "user", "content": "Alternative branch " + PAYLOADS[12]},
    )
    tree.add(
        alt,
        type="message",
        message=_assistant([{"type": "text", "text": "Nested A " + PAYLOADS[13]}]),
    )
    tree.add(
        alt,
        type="message",
        message=_assistant([{"type": "text", "text": "Nested B " + PAYLOADS[14]}]),
    )
    # an orphan (its parent does not exist): shown as a root of its own
    tree.add(
        PAYLOADS[15],
        type="message",
        message={"role": "user", "content": "Orphan " + PAYLOADS[16]},
    )
    length = tree.add(
        named,
        type="message",
        message=_assistant(
            [{"type": "text", "text": "Cut short " + PAYLOADS[7]}], stopReason="length"
        ),
    )
    aborted = tree.add(
        length,
        type="message",
        message=_assistant(
            [{"type": "text", "text": "Aborted " + PAYLOADS[8]}], stopReason="aborted"
        ),
    )
    tree.add(
        aborted,
        type="message",
        timestamp=PAYLOADS[9],
        message={"role": "user", "content": "Last user message on the main line " + PAYLOADS[10]},
    )
    # damaged lines of every kind
    tree.raw('{"type":"message","id":"<script>window.__pwned=1</script>", broken')
    tree.raw(json.dumps(PAYLOADS[0]))
    tree.raw(json.dumps({"no_type": PAYLOADS[2]}))
    tree.raw(json.dumps({"type": "session", "id": PAYLOADS[3], "cwd": PAYLOADS[4]}))
    body = "\n".join(tree.lines) + "\n"
    # a cut-off last line (no newline): the session was still being written
    body += '{"type":"message","message":{"role":"user","content":"</script><script>window.__pw'
    return body.encode("utf-8")


def corpus_text_markers() -> list[str]:
    """Literal strings that must be visible as text on the page (escaped, not interpreted)."""
    return [
        "User says",
        "Assistant says",
        PAYLOADS[0],
        PAYLOADS[1],
        "{{7*7}}",
        "Last user message on the main line",
    ]
