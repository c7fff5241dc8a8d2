import os

from pymongo import MongoClient

client = MongoClient(os.environ["MONGO_URI"], serverSelectionTimeoutMS=2000)
events = client["analytics"]["events"]


def handle(event, context=None):
    pipeline = [
        {"$match": {"type": event.get("type", "pageview")}},
        {"$group": {"_id": "$path", "hits": {"$sum": 1}}},
        {"$sort": {"hits": -1}},
        {"$limit": 10},
    ]
    return list(events.aggregate(pipeline))
