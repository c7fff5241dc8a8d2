from sless.cli import main

main()
