import os
from datetime import datetime, timedelta, timezone

from pymongo import MongoClient

client = MongoClient(os.environ["MONGODB_URI"], serverSelectionTimeoutMS=3000)
orders = client.get_default_database()["orders"]


def handle(event, context=None):
    """Daily revenue per store for the dashboard chart."""
    days = int(event.get("days", 14))
    since = datetime.now(timezone.utc) - timedelta(days=days)
    pipeline = [
        {"$match": {"status": "paid", "paidAt": {"$gte": since}}},
        {"$group": {
            "_id": {"store": "$storeId", "day": {"$dateToString": {"format": "%Y-%m-%d", "date": "$paidAt"}}},
            "revenue": {"$sum": "$total"},
            "orders": {"$sum": 1},
        }},
        {"$sort": {"_id.day": 1}},
    ]
    series = {}
    for row in orders.aggregate(pipeline, allowDiskUse=False):
        store = series.setdefault(row["_id"]["store"], [])
        store.append({"day": row["_id"]["day"], "revenue": round(row["revenue"], 2), "orders": row["orders"]})
    return {"since": since.date().isoformat(), "stores": series}
