"""The lean tool schemas: titles, "or null", upper bounds, lengths, item counts, lower bounds of 0 or 1 and
assumed defaults go; other lower bounds, choices and the defaults a model must know stay."""
from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from lookout.clients.mcp.lean_schema import lean_schema


class Until(BaseModel):
    regex: Annotated[str | None, Field(description="a pattern")] = None
    stable_ms: Annotated[int | None, Field(ge=0, le=50)] = None


class Arguments(BaseModel):
    terminal_id: str
    keys: list[str] | None = None
    until: Until | None = None
    timeout_ms: Annotated[int, Field(ge=0, le=50_000)] = 10_000
    either: int | str | None = None
    max_dimension: Annotated[int | None, Field(ge=100, le=4000)] = None


def test_titles_or_null_upper_bounds_and_assumed_lower_bounds_go_and_other_lower_bounds_stay() -> None:
    lean = lean_schema(Arguments.model_json_schema())
    assert '"title"' not in json.dumps(lean)
    props = lean["properties"]
    assert props["terminal_id"] == {"type": "string"} and lean["required"] == ["terminal_id"]
    assert props["keys"] == {"type": "array", "items": {"type": "string"}}
    assert props["until"] == {"$ref": "#/$defs/Until"}
    assert props["timeout_ms"] == {"type": "integer", "default": 10_000}
    until = lean["$defs"]["Until"]["properties"]
    assert until["regex"] == {"type": "string", "description": "a pattern"}
    assert until["stable_ms"] == {"type": "integer"}
    assert props["max_dimension"] == {"type": "integer", "minimum": 100}, "a bound that says something"
    assert props["either"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}, "may be left out: no null"


def test_keep_bounds_keeps_what_validation_checks() -> None:
    props = lean_schema(Arguments.model_json_schema(), keep_bounds=True)["properties"]
    assert props["timeout_ms"] == {"type": "integer", "minimum": 0, "maximum": 50_000, "default": 10_000}


def test_a_property_named_title_is_kept() -> None:
    class Page(BaseModel):
        title: str

    assert "title" in lean_schema(Page.model_json_schema())["properties"]


def test_lengths_item_counts_false_defaults_first_choices_and_open_objects_go() -> None:
    class Body(BaseModel):
        name: Annotated[str, Field(min_length=1, max_length=200)]
        budget: Annotated[int, Field(ge=1, le=2_000_000)] = 8000
        lines: Annotated[int, Field(ge=1, le=5000)] = 200
        flag: bool = False
        on: bool = True
        steps: list[dict[str, int]] = []
        actions: Annotated[list[str], Field(min_length=1, max_length=50)]
        mode: Literal["any", "all"] = "any"
        format: Literal["json", "text"] = "text"

    props = lean_schema(Body.model_json_schema())["properties"]
    assert props["name"] == {"type": "string"}
    assert props["budget"] == {"type": "integer", "default": 8000}
    assert props["lines"] == {"type": "integer", "default": 200}
    assert props["mode"] == {"type": "string", "enum": ["any", "all"]}, "the first choice is the default"
    assert props["format"] == {"type": "string", "enum": ["json", "text"], "default": "text"}
    assert props["flag"] == {"type": "boolean"} and props["on"] == {"type": "boolean", "default": True}
    assert props["steps"]["items"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["actions"] == {"type": "array", "items": {"type": "string"}}
