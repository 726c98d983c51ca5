"""Config discovery, the dialect schemas and loading."""
