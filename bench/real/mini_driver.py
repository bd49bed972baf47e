"""Runs mini-swe-agent on one task in one repository; run with the Python that has it installed.

    python mini_driver.py '<json: task, repo, base_url, model, mode, max_tokens, step_limit, seconds, trajectory>'

`mode` is `text` (its bash-fence actions, config/mini_textbased.yaml, with the action fence
also accepted as ```bash or ```sh, as a small model writes it) or `tools` (its native bash
tool, config/mini.yaml). Prints one JSON line: exit status, steps, and whether it submitted.
"""

import json
import os
import sys
from pathlib import Path

import yaml

os.environ.setdefault("MSWEA_COST_TRACKING", "ignore_errors")
os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")

from minisweagent import package_dir  # noqa: E402
from minisweagent.agents.default import DefaultAgent  # noqa: E402
from minisweagent.environments.local import LocalEnvironment  # noqa: E402
from minisweagent.models.litellm_model import LitellmModel  # noqa: E402
from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel  # noqa: E402

ACTION_FENCE = r"```(?:mswea_bash_command|bash|sh|shell)\s*\n(.*?)\n```"


def main():
    job = json.loads(sys.argv[1])
    text_mode = job["mode"] == "text"
    config = yaml.safe_load((Path(package_dir) / "config" / ("mini_textbased.yaml" if text_mode else "mini.yaml")).read_text())
    model_config = dict(config.get("model", {}))
    model_config.pop("model_class", None)
    model_kwargs = dict(model_config.pop("model_kwargs", {}) or {})
    model_kwargs.update({"api_base": job["base_url"], "api_key": "not-needed", "max_tokens": job["max_tokens"],
                         "drop_params": True, "timeout": 900})
    if job.get("temperature") is not None:
        model_kwargs["temperature"] = job["temperature"]
    model_config.update({"model_name": f"openai/{job['model']}", "model_kwargs": model_kwargs,
                         "cost_tracking": "ignore_errors"})
    if text_mode:
        model_config["action_regex"] = ACTION_FENCE
        model = LitellmTextbasedModel(**model_config)
    else:
        model = LitellmModel(**model_config)
    environment = dict(config.get("environment", {}))
    environment.pop("environment_class", None)
    environment.update({"cwd": job["repo"], "timeout": 120})
    agent_config = dict(config["agent"])
    agent_config.pop("mode", None)
    agent_config.update({"step_limit": job["step_limit"], "cost_limit": 0,
                         "wall_time_limit_seconds": job["seconds"],
                         "output_path": Path(job["trajectory"])})
    agent = DefaultAgent(model, LocalEnvironment(**environment), **agent_config)
    try:
        result = agent.run(job["task"])
        status = result.get("exit_status", "")
    except Exception as err:  # the agent's own failure is a result too
        status = f"{type(err).__name__}: {err}"
    print(json.dumps({"exit_status": status, "steps": agent.n_calls}))


if __name__ == "__main__":
    main()
