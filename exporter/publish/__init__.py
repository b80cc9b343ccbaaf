"""Publishers: share an export as a secret GitHub gist or a Hugging Face dataset."""
