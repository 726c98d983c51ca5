"""One module per subcommand, each with ``main(args) -> exit code``."""
