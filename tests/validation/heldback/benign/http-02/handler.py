import httpx, os

async def _fetch(city):
    async with httpx.AsyncClient(timeout=5) as c:
        r = await c.get("https://api.openweathermap.org/data/2.5/weather", params={"q": city, "appid": os.environ["OWM_KEY"]})
        return r.json()

def handle(event, context):
    import asyncio
    data = asyncio.run(_fetch(event["query"].get("city", "Berlin")))
    return {"temp": data["main"]["temp"], "desc": data["weather"][0]["description"]}
