"""The optional summariser: an OpenAI-compatible chat endpoint (LOOKOUT_SUMMARIZER_URL), never required.

Runs in a worker thread (urllib, no extra dependency); any failure is reported to the caller, which falls
back to the deterministic summary.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

PROMPT = (
    "Summarise this part of an AI agent's session with terminals, browser pages and Android devices for the "
    "agent itself, in at most 120 words: what it did, what it found, what failed (with exit codes and "
    "errors), and where each resource was left (cwd, URL, screen). Plain text, no preamble."
)


class ChatSummarizer:
    def __init__(self, url: str, model: str = "default", api_key: str | None = None, timeout_s: float = 60) -> None:
        base = url.rstrip("/")
        self.url = base if base.endswith("/chat/completions") else f"{base}/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s

    @property
    def method(self) -> str:
        return f"model:{self.model}"

    def summarise(self, content: str) -> str:
        body = {"model": self.model, "temperature": 0,
                "messages": [{"role": "system", "content": PROMPT}, {"role": "user", "content": content}]}  # fmt: skip
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers, method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            answer: Any = json.loads(response.read())
        text = answer["choices"][0]["message"]["content"]
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the summariser answered with no text")
        return text.strip()
