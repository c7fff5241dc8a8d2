from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

app = FastAPI()


class Subscriber(BaseModel):
    email: str = Field(pattern=r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$")
    topics: list[str] = []


SUBSCRIBERS: dict[str, Subscriber] = {}


@app.post("/subscribe")
async def subscribe(sub: Subscriber):
    if sub.email in SUBSCRIBERS:
        raise HTTPException(409, "already subscribed")
    SUBSCRIBERS[sub.email] = sub
    return {"subscribed": sub.email}


@app.delete("/subscribe/{email}")
async def unsubscribe(email: str):
    SUBSCRIBERS.pop(email, None)
    return {"unsubscribed": email}
