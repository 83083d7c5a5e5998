"""What a ROS 2 launch file of launch/ros2 starts, without ROS 2's launch (not on the test machine): the nodes it
would run, each with its package, executable, namespace, arguments and parameters, as JSON on stdout.

    launch_params.py FILE [name:=value ...]

FILE ending in .py is run under a stand-in for `launch` and `launch_ros` (LaunchDescription, DeclareLaunchArgument,
OpaqueFunction, LaunchConfiguration, Node: what main.launch.py uses); any other FILE is read as launch XML (arg, let,
group, node, param; the conditions if/unless; the substitutions var, eval, env). Parameter values are taken as
launch_ros takes them: an XML value is its text after substitution read as YAML, which must give a bool, an integer,
a float, a string or a list of one of those (an empty text gives no value: launch_ros refuses it); a Python value
must be of those types. Anything else this stand-in does not know is an error, never skipped.
"""
import json
import os
import shlex
import sys
import types
import xml.etree.ElementTree as ET

import yaml

SCALARS = (bool, int, float, str)


def fail(message):
    print(f'launch_params.py: {message}', file=sys.stderr)
    sys.exit(2)


def check_value(name, value):
    """A parameter value launch_ros accepts (lists as lists)."""
    if isinstance(value, SCALARS):
        return value
    if isinstance(value, (list, tuple)) and value:
        kinds = {bool if isinstance(v, bool) else type(v) for v in value}
        if len(kinds) == 1 and kinds <= set(SCALARS):
            return list(value)
    fail(f'parameter {name}: launch_ros refuses {value!r} ({type(value).__name__})')


def flag(text, what):
    """A condition, as launch evaluates it."""
    value = text.strip().lower()
    if value in ('true', '1'):
        return True
    if value in ('false', '0'):
        return False
    fail(f'{what}: {text!r} is not a condition (true, false, 1 or 0)')


# --- XML ------------------------------------------------------------------------------------------------------------

class Substitutions:
    """launch's substitution syntax: $(name arg ...), arguments unquoted or in quotes with backslash escapes, nested."""

    def __init__(self, config):
        self.config = config

    def text(self, s):
        out, i = [], 0
        while i < len(s):
            if s.startswith('$(', i):
                i, value = self.sub(s, i + 2)
                out.append(value)
            else:
                out.append(s[i])
                i += 1
        return ''.join(out)

    def sub(self, s, i):
        j = i
        while j < len(s) and (s[j].isalnum() or s[j] in '-_'):
            j += 1
        name, i, args = s[i:j], j, []
        while True:
            while i < len(s) and s[i] == ' ':
                i += 1
            if i >= len(s):
                fail(f'unterminated substitution in {s!r}')
            if s[i] == ')':
                return i + 1, self.apply(name, args)
            buf = []
            if s[i] in '\'"':
                quote, i = s[i], i + 1
                while i < len(s) and s[i] != quote:
                    if s[i] == '\\' and i + 1 < len(s):
                        buf.append(s[i + 1])
                        i += 2
                    elif s.startswith('$(', i):
                        i, value = self.sub(s, i + 2)
                        buf.append(value)
                    else:
                        buf.append(s[i])
                        i += 1
                i += 1
            else:
                while i < len(s) and s[i] not in ' )':
                    if s.startswith('$(', i):
                        i, value = self.sub(s, i + 2)
                        buf.append(value)
                    else:
                        buf.append(s[i])
                        i += 1
            args.append(''.join(buf))

    def apply(self, name, args):
        if name == 'var' and len(args) == 1:
            if args[0] not in self.config:
                fail(f'$(var {args[0]}): no such launch configuration')
            return self.config[args[0]]
        if name == 'eval' and len(args) == 1:
            return str(eval(args[0], {}, {}))
        if name == 'env' and len(args) in (1, 2):
            value = os.environ.get(args[0], args[1] if len(args) == 2 else None)
            if value is None:
                fail(f'$(env {args[0]}): not set')
            return value
        fail(f'substitution $({name} {" ".join(args)}) is not known to this stand-in')


def xml_nodes(path, given):
    root = ET.parse(path).getroot()
    if root.tag != 'launch':
        fail(f'{path}: the root is <{root.tag}>, not <launch>')
    config, nodes = {}, []
    s = Substitutions(config)

    def condition(e):
        if 'if' in e.attrib and not flag(s.text(e.attrib['if']), f'<{e.tag}> if'):
            return False
        if 'unless' in e.attrib and flag(s.text(e.attrib['unless']), f'<{e.tag}> unless'):
            return False
        return True

    def known(e, attrs):
        extra = set(e.attrib) - set(attrs) - {'if', 'unless'}
        if extra:
            fail(f'<{e.tag}>: attributes {sorted(extra)} are not known to this stand-in')

    def walk(parent):
        for e in parent:
            if not condition(e):
                continue
            if e.tag == 'arg':
                known(e, ['name', 'default', 'description'])
                name = e.attrib['name']
                if name in given:
                    config[name] = given[name]
                elif 'default' in e.attrib:
                    config[name] = s.text(e.attrib['default'])
                else:
                    fail(f'argument {name} has no default and was not given')
            elif e.tag == 'let':
                known(e, ['name', 'value'])
                config[e.attrib['name']] = s.text(e.attrib['value'])
            elif e.tag == 'group':
                known(e, [])
                walk(e)
            elif e.tag == 'node':
                known(e, ['pkg', 'exec', 'name', 'namespace', 'args', 'output'])
                params = {}
                for p in e:
                    if p.tag != 'param':
                        fail(f'<{p.tag}> in <node> is not known to this stand-in')
                    known(p, ['name', 'value'])
                    name = p.attrib['name']
                    text = s.text(p.attrib['value'])
                    params[name] = check_value(name, yaml.safe_load(text))
                nodes.append({
                    'package': e.attrib['pkg'],
                    'executable': e.attrib['exec'],
                    'name': s.text(e.attrib['name']) if 'name' in e.attrib else None,
                    'namespace': s.text(e.attrib.get('namespace', '')),
                    'arguments': shlex.split(s.text(e.attrib.get('args', ''))),
                    'parameters': params,
                })
            else:
                fail(f'<{e.tag}> is not known to this stand-in')

    walk(root)
    unused = set(given) - set(config)
    if unused:
        fail(f'arguments {sorted(unused)} are not declared by {path}')
    return nodes


# --- Python ---------------------------------------------------------------------------------------------------------

class Context:
    def __init__(self):
        self.launch_configurations = {}


def python_nodes(path, given):
    nodes = []

    class LaunchDescription:
        def __init__(self, entities=()):
            self.entities = list(entities)

    class DeclareLaunchArgument:
        def __init__(self, name, default_value=None, description=None, choices=None):
            self.name, self.default = name, default_value

    class OpaqueFunction:
        def __init__(self, function, args=None, kwargs=None):
            self.function, self.args, self.kwargs = function, args or [], kwargs or {}

    class LaunchConfiguration:
        def __init__(self, name, default=None):
            self.name = name

        def perform(self, context):
            if self.name not in context.launch_configurations:
                fail(f'LaunchConfiguration({self.name!r}): no such launch configuration')
            return context.launch_configurations[self.name]

    class Node:
        KNOWN = {'package', 'executable', 'name', 'namespace', 'arguments', 'parameters', 'output'}

        def __init__(self, **kwargs):
            extra = set(kwargs) - self.KNOWN
            if extra:
                fail(f'Node({sorted(extra)}) is not known to this stand-in')
            params = {}
            for group in kwargs.get('parameters', []):
                if not isinstance(group, dict):
                    fail(f'Node parameters {group!r}: only dictionaries are known to this stand-in')
                for name, value in group.items():
                    params[name] = check_value(name, value)
            for a in kwargs.get('arguments', []):
                if not isinstance(a, str):
                    fail(f'Node argument {a!r} is not a string')
            self.record = {
                'package': kwargs['package'],
                'executable': kwargs['executable'],
                'name': kwargs.get('name'),
                'namespace': kwargs.get('namespace') or '',
                'arguments': list(kwargs.get('arguments', [])),
                'parameters': params,
            }

    modules = {
        'launch': {'LaunchDescription': LaunchDescription},
        'launch.actions': {'DeclareLaunchArgument': DeclareLaunchArgument, 'OpaqueFunction': OpaqueFunction},
        'launch.substitutions': {'LaunchConfiguration': LaunchConfiguration},
        'launch_ros': {},
        'launch_ros.actions': {'Node': Node},
    }
    for name, attrs in modules.items():
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
    code = compile(open(path).read(), path, 'exec')
    scope = {'__name__': 'launch_file', '__file__': path}
    exec(code, scope)
    context = Context()

    def run(entities):
        for e in entities:
            if isinstance(e, DeclareLaunchArgument):
                value = given.get(e.name, e.default)
                if value is None:
                    fail(f'argument {e.name} has no default and was not given')
                context.launch_configurations[e.name] = value
            elif isinstance(e, OpaqueFunction):
                run(e.function(context, *e.args, **e.kwargs) or [])
            elif isinstance(e, Node):
                nodes.append(e.record)
            else:
                fail(f'{e!r} is not known to this stand-in')

    run(scope['generate_launch_description']().entities)
    unused = set(given) - set(context.launch_configurations)
    if unused:
        fail(f'arguments {sorted(unused)} are not declared by {path}')
    return nodes


def main():
    if len(sys.argv) < 2:
        fail('usage: launch_params.py FILE [name:=value ...]')
    path, given = sys.argv[1], {}
    for a in sys.argv[2:]:
        name, sep, value = a.partition(':=')
        if not sep:
            fail(f'{a!r} is not name:=value')
        given[name] = value
    nodes = python_nodes(path, given) if path.endswith('.py') else xml_nodes(path, given)
    print(json.dumps(nodes))


if __name__ == '__main__':
    main()
