import math

def haversine(a, b):
    r = 6371.0
    la1, lo1, la2, lo2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * r * math.asin(math.sqrt(h))

def handle(event, context):
    q = event["query"]
    return {"km": round(haversine((float(q["lat1"]), float(q["lon1"])), (float(q["lat2"]), float(q["lon2"]))), 3)}
