# Renders still frames of rigbake VAT bakes through Godot's own importers
# (the .glb and .exr files imported by the editor, tools/godot/make_project.py)
# with docs/shaders/godot3/vat.shader, from orthographic cameras given in a
# job file, and saves each frame as a PNG:
#
#   godot3 --path PROJECT -- --job=/abs/job.json
#
# The job: {"size": N, "models": [{"scene": "res://...vat.glb",
# "positions": "res://...positions.exr", "normals": null or a path,
# "vat_width", "vat_bands", "rows_per_block", "lookup_uv_set" (0 or 1),
# "placement": null or 16 numbers (column-major), "shots":
# [{"row", "center": [x, y, z], "half", "azimuth", "elevation", "out"}]}],
# "report": "/abs/report.json"}. The report lists, per model, what the
# importers made of the files (surface formats, texture format and flags)
# and every shot written; "error" when something failed.
extends Node

var report = {"models": [], "shots": [], "error": null}
var report_path = ""


func _ready():
	var job_path = ""
	for a in OS.get_cmdline_args():
		if a.begins_with("--job="):
			job_path = a.substr(6, a.length() - 6)
	if job_path == "":
		_fail("no --job=FILE argument")
		return
	var f = File.new()
	if f.open(job_path, File.READ) != OK:
		_fail("cannot read " + job_path)
		return
	var parsed = JSON.parse(f.get_as_text())
	f.close()
	if parsed.error != OK:
		_fail("bad job JSON: " + parsed.error_string)
		return
	var job = parsed.result
	report_path = job["report"]
	call_deferred("_run", job)


func _fail(why):
	printerr("run.gd: " + why)
	report["error"] = why
	_finish()


func _finish():
	if report_path != "":
		var f = File.new()
		if f.open(report_path, File.WRITE) == OK:
			f.store_string(JSON.print(report))
			f.close()
	get_tree().quit()


func _meshes(node, into):
	if node is MeshInstance:
		into.append(node)
	for c in node.get_children():
		_meshes(c, into)


func _transform(m):
	# Column-major 4x4 (glTF) to a Godot Transform.
	return Transform(Vector3(m[0], m[1], m[2]), Vector3(m[4], m[5], m[6]),
		Vector3(m[8], m[9], m[10]), Vector3(m[12], m[13], m[14]))


func _run(job):
	var size = int(job["size"])
	var vp = Viewport.new()
	vp.size = Vector2(size, size)
	vp.own_world = true
	vp.world = World.new()
	var env = Environment.new()
	env.background_mode = Environment.BG_COLOR
	env.background_color = Color(0, 0, 0)
	env.ambient_light_color = Color(0, 0, 0)
	env.ambient_light_energy = 0.0
	env.tonemap_mode = Environment.TONE_MAPPER_LINEAR
	vp.world.environment = env
	vp.msaa = Viewport.MSAA_DISABLED
	vp.render_target_update_mode = Viewport.UPDATE_ALWAYS
	add_child(vp)
	var cam = Camera.new()
	cam.projection = Camera.PROJECTION_ORTHOGONAL
	vp.add_child(cam)
	cam.current = true
	var shader = load(job.get("shader", "res://vat.shader"))
	if shader == null:
		_fail("cannot load the shader")
		return
	for m in job["models"]:
		var packed = load(m["scene"])
		if packed == null:
			_fail("cannot load " + m["scene"] + " (not imported?)")
			return
		var tex = load(m["positions"])
		if tex == null:
			_fail("cannot load " + m["positions"] + " (not imported?)")
			return
		var model = packed.instance()
		if m.get("placement") != null:
			model.transform = _transform(m["placement"])
		vp.add_child(model)
		var material = ShaderMaterial.new()
		material.shader = shader
		material.set_shader_param("positions", tex)
		material.set_shader_param("vat_width", int(m["vat_width"]))
		material.set_shader_param("vat_bands", int(m["vat_bands"]))
		material.set_shader_param("rows_per_block", int(m["rows_per_block"]))
		material.set_shader_param("lookup_in_uv2", int(m["lookup_uv_set"]) == 1)
		if m.get("normals") != null:
			material.set_shader_param("normals", load(m["normals"]))
			material.set_shader_param("has_normals", true)
		material.set_shader_param("emission", 1.0)
		var meshes = []
		_meshes(model, meshes)
		var surfaces = []
		for mi in meshes:
			mi.material_override = material
			# VAT frames move vertices outside the imported (first frame) bounds.
			mi.extra_cull_margin = 16384.0
			for s in range(mi.mesh.get_surface_count()):
				var fmt = mi.mesh.surface_get_format(s)
				surfaces.append({
					"node": mi.name,
					"format": fmt,
					"uv2": (fmt & Mesh.ARRAY_FORMAT_TEX_UV2) != 0,
					"uv2_compressed": (fmt & Mesh.ARRAY_COMPRESS_TEX_UV2) != 0,
					"uv_compressed": (fmt & Mesh.ARRAY_COMPRESS_TEX_UV) != 0,
					"global": _columns(mi.global_transform),
				})
		var image = tex.get_data()
		report["models"].append({
			"scene": m["scene"],
			"surfaces": surfaces,
			"texture": {
				"width": tex.get_width(), "height": tex.get_height(),
				"flags": tex.get_flags(), "image_format": image.get_format(),
				"mipmaps": image.has_mipmaps(),
			},
		})
		for shot in m["shots"]:
			var row = int(shot["row"])
			material.set_shader_param("row0", row)
			material.set_shader_param("row1", row)
			material.set_shader_param("fraction", 0.0)
			var half = float(shot["half"])
			var c = shot["center"]
			var center = Vector3(c[0], c[1], c[2])
			var az = deg2rad(float(shot["azimuth"]))
			var el = deg2rad(float(shot["elevation"]))
			var toward = Vector3(cos(el) * sin(az), sin(el), cos(el) * cos(az))
			cam.size = 2.0 * half
			cam.near = 0.001 * half
			cam.far = 2000.0 * half
			cam.look_at_from_position(center + toward * 1000.0 * half, center, Vector3.UP)
			# Two frames: the parameters reach the GPU, then the frame is drawn.
			yield(VisualServer, "frame_post_draw")
			yield(VisualServer, "frame_post_draw")
			var shot_image = vp.get_texture().get_data()
			shot_image.flip_y()
			if shot_image.save_png(shot["out"]) != OK:
				_fail("cannot write " + shot["out"])
				return
			report["shots"].append(shot["out"])
		vp.remove_child(model)
		model.queue_free()
	_finish()


func _columns(t):
	var b = t.basis
	return [b.x.x, b.x.y, b.x.z, 0, b.y.x, b.y.y, b.y.z, 0, b.z.x, b.z.y, b.z.z, 0,
		t.origin.x, t.origin.y, t.origin.z, 1]
