def run(args):
    w, h = args.get('w', 100), args.get('h', 100)
    return {'w': w // 2, 'h': h // 2}
