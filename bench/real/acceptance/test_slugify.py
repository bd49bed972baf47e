from textkit import slugify


def test_punctuation_and_case():
    assert slugify("Hello, World!") == "hello-world"


def test_runs_and_ends():
    assert slugify("  Many   spaces  ") == "many-spaces"
    assert slugify("--a--b--") == "a-b"


def test_digits_kept():
    assert slugify("Rust 2024 edition") == "rust-2024-edition"
