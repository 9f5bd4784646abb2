"""A small agent for the README's "Scaling out with Temporal" commands.

    reactloop worker --agent examples.durable_agent:agent --task-queue reactloop
    reactloop run --temporal --agent examples.durable_agent:agent --task-queue reactloop "..."

The worker and the caller load the same agent: its name ("calculator") and its tools' names
name the workflow and the activities, so they must match on both sides.
"""

from reactloop import Agent, tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: first factor
        b: second factor
    """
    return a * b


agent = Agent(model="local", tools=[add, multiply], max_iterations=4, name="calculator")
