import colorama


def handle(event):
    return colorama.Fore.RED + 'x'
