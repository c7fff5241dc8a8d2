import csv
import io
import statistics


def handle(event, context=None):
    reader = csv.DictReader(io.StringIO(event["csv"]))
    column = event.get("column", "value")
    values = [float(row[column]) for row in reader if row.get(column)]
    if not values:
        return {"error": "no values"}
    return {
        "count": len(values),
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "stdev": statistics.pstdev(values),
    }
