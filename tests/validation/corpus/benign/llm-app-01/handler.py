import os

from openai import OpenAI

client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])
SYSTEM = "You are a helpful assistant that summarises customer support emails in two sentences."


def handle(event, context=None):
    resp = client.chat.completions.create(
        model=os.environ.get("MODEL", "gpt-4o-mini"),
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": event["email"][:8000]}],
    )
    return {"summary": resp.choices[0].message.content}
