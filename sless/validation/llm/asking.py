"""One request to the model per part, and the strict parsing of its answer."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from typing import Any, Literal

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sless.config import LLMSettings
from sless.validation.llm.chunking import Chunk
from sless.validation.llm.prompting import render, system_prompt

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["malicious", "suspicious", "benign"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "file": {"type": "string"},
                    "line": {"type": ["integer", "null"]},
                    "reason": {"type": "string"},
                },
                "required": ["file", "line", "reason"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["verdict", "confidence", "findings"],
    "additionalProperties": False,
}


class _AnswerFinding(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    file: str
    line: int | None
    reason: str


class Answer(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    verdict: Literal["malicious", "suspicious", "benign"]
    confidence: float = Field(ge=0.0, le=1.0)
    findings: list[_AnswerFinding]


def nonce_for(part: list[Chunk]) -> str:
    """A boundary id that appears nowhere in the part's content or paths."""
    content = "\n".join(chunk.path + "\n" + "\n".join(chunk.rows) for chunk in part)
    for _ in range(8):
        nonce = secrets.token_hex(16)
        if nonce not in content:
            return nonce
    # 128 random bits colliding eight times means something is very wrong
    raise ReviewFailed("could not pick a boundary nonce absent from the content")


class ReviewFailed(Exception):
    """A part could not be reviewed; ``str(e)`` is a short detail without secrets."""


@dataclass(frozen=True)
class PartResult:
    answer: Answer | None = None
    error: str | None = None


async def review_part(
    client: openai.AsyncOpenAI,
    settings: LLMSettings,
    model: str,
    runtime: str,
    part: list[Chunk],
    evidence: tuple[str, ...] = (),
) -> PartResult:
    try:
        return PartResult(answer=await ask(client, settings, model, runtime, part, evidence))
    except ReviewFailed as e:
        return PartResult(error=str(e))


async def ask(
    client: openai.AsyncOpenAI,
    settings: LLMSettings,
    model: str,
    runtime: str,
    part: list[Chunk],
    evidence: tuple[str, ...] = (),
) -> Answer:
    nonce = nonce_for(part)
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": system_prompt(nonce, runtime)},
        {"role": "user", "content": render(part, nonce, evidence)},
    ]
    try:
        async with asyncio.timeout(settings.timeout_s):
            completion = await client.chat.completions.create(
                model=model,
                messages=messages,
                response_format={
                    "type": "json_schema",
                    "json_schema": {
                        "name": "sless_review",
                        "strict": True,
                        "schema": ANSWER_SCHEMA,
                    },
                },
            )
    except (TimeoutError, openai.APITimeoutError) as e:
        raise ReviewFailed(f"timed out after {settings.timeout_s:g}s") from e
    except openai.APIStatusError as e:
        raise ReviewFailed(f"endpoint answered HTTP {e.status_code}") from e
    except openai.APIConnectionError as e:
        raise ReviewFailed("could not connect to the endpoint") from e
    except openai.OpenAIError as e:
        raise ReviewFailed(f"client error ({type(e).__name__})") from e
    return parse(completion)


def parse(completion: object) -> Answer:
    if not isinstance(completion, ChatCompletion):
        raise ReviewFailed("answer is not a chat completion")
    if not completion.choices:
        raise ReviewFailed("answer has no choices")
    choice = completion.choices[0]
    if choice.message.refusal or choice.finish_reason == "content_filter":
        raise ReviewFailed("model refused to review")
    if choice.finish_reason == "length":
        raise ReviewFailed("answer was cut short (finish_reason length)")
    content = choice.message.content
    if not content or not content.strip():
        raise ReviewFailed("empty answer")
    try:
        return Answer.model_validate_json(content)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'answer'}: {err['type']}"
            for err in e.errors(include_input=False, include_url=False)[:3]
        )
        raise ReviewFailed(cut(f"unparsable answer ({problems})", 200)) from e


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
