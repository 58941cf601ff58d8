"""The protobuf messages of core/v1 PersistentVolumeClaims and PersistentVolumes and storage.k8s.io/v1
StorageClasses.

Declared as data in the format of ``sim.protoschemas`` (see ``sim.podmessages`` for ``keep`` and
``inline``); field numbers and names are those of k8s.io/api v0.34's ``generated.proto`` and ``types.go``.
"""

from __future__ import annotations

from sim.protoschemas import Field


def _f(
    name: str,
    shape: str,
    message: str = "",
    *,
    repeated: bool = False,
    keep: bool = False,
    inline: bool = False,
) -> Field:
    return Field(name, shape, message, repeated, keep, inline)


MESSAGES: dict[str, dict[int, Field]] = {
    "PersistentVolumeClaim": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "PersistentVolumeClaimSpec", keep=True),
        3: _f("status", "msg", "PersistentVolumeClaimStatus", keep=True),
    },
    "PersistentVolume": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("spec", "msg", "PersistentVolumeSpec", keep=True),
        3: _f("status", "msg", "PersistentVolumeStatus", keep=True),
    },
    "StorageClass": {
        1: _f("metadata", "msg", "ObjectMeta"),
        2: _f("provisioner", "str", keep=True),
        3: _f("parameters", "map", "str"),
        4: _f("reclaimPolicy", "str", keep=True),
        5: _f("mountOptions", "str", repeated=True),
        6: _f("allowVolumeExpansion", "bool", keep=True),
        7: _f("volumeBindingMode", "str", keep=True),
        8: _f("allowedTopologies", "msg", "TopologySelectorTerm", repeated=True),
    },
    "PersistentVolumeClaimStatus": {
        1: _f("phase", "str"),
        2: _f("accessModes", "str", repeated=True),
        3: _f("capacity", "map", "quantity"),
        4: _f("conditions", "msg", "PersistentVolumeClaimCondition", repeated=True),
        5: _f("allocatedResources", "map", "quantity"),
        7: _f("allocatedResourceStatuses", "map", "str"),
        8: _f("currentVolumeAttributesClassName", "str", keep=True),
        9: _f("modifyVolumeStatus", "msg", "ModifyVolumeStatus", keep=True),
    },
    "PersistentVolumeSpec": {
        1: _f("capacity", "map", "quantity"),
        2: _f("persistentVolumeSource", "msg", "PersistentVolumeSource", inline=True),
        3: _f("accessModes", "str", repeated=True),
        4: _f("claimRef", "msg", "ObjectReference", keep=True),
        5: _f("persistentVolumeReclaimPolicy", "str"),
        6: _f("storageClassName", "str"),
        7: _f("mountOptions", "str", repeated=True),
        8: _f("volumeMode", "str", keep=True),
        9: _f("nodeAffinity", "msg", "VolumeNodeAffinity", keep=True),
        10: _f("volumeAttributesClassName", "str", keep=True),
    },
    "PersistentVolumeStatus": {
        1: _f("phase", "str"),
        2: _f("message", "str"),
        3: _f("reason", "str"),
        4: _f("lastPhaseTransitionTime", "time", keep=True),
    },
    "TopologySelectorTerm": {
        1: _f("matchLabelExpressions", "msg", "TopologySelectorLabelRequirement", repeated=True),
    },
    "PersistentVolumeClaimCondition": {
        1: _f("type", "str", keep=True),
        2: _f("status", "str", keep=True),
        3: _f("lastProbeTime", "time", keep=True),
        4: _f("lastTransitionTime", "time", keep=True),
        5: _f("reason", "str"),
        6: _f("message", "str"),
    },
    "ModifyVolumeStatus": {
        1: _f("targetVolumeAttributesClassName", "str"),
        2: _f("status", "str", keep=True),
    },
    "PersistentVolumeSource": {
        1: _f("gcePersistentDisk", "msg", "GCEPersistentDiskVolumeSource", keep=True),
        2: _f("awsElasticBlockStore", "msg", "AWSElasticBlockStoreVolumeSource", keep=True),
        3: _f("hostPath", "msg", "HostPathVolumeSource", keep=True),
        4: _f("glusterfs", "msg", "GlusterfsPersistentVolumeSource", keep=True),
        5: _f("nfs", "msg", "NFSVolumeSource", keep=True),
        6: _f("rbd", "msg", "RBDPersistentVolumeSource", keep=True),
        7: _f("iscsi", "msg", "ISCSIPersistentVolumeSource", keep=True),
        8: _f("cinder", "msg", "CinderPersistentVolumeSource", keep=True),
        9: _f("cephfs", "msg", "CephFSPersistentVolumeSource", keep=True),
        10: _f("fc", "msg", "FCVolumeSource", keep=True),
        11: _f("flocker", "msg", "FlockerVolumeSource", keep=True),
        12: _f("flexVolume", "msg", "FlexPersistentVolumeSource", keep=True),
        13: _f("azureFile", "msg", "AzureFilePersistentVolumeSource", keep=True),
        14: _f("vsphereVolume", "msg", "VsphereVirtualDiskVolumeSource", keep=True),
        15: _f("quobyte", "msg", "QuobyteVolumeSource", keep=True),
        16: _f("azureDisk", "msg", "AzureDiskVolumeSource", keep=True),
        17: _f("photonPersistentDisk", "msg", "PhotonPersistentDiskVolumeSource", keep=True),
        18: _f("portworxVolume", "msg", "PortworxVolumeSource", keep=True),
        19: _f("scaleIO", "msg", "ScaleIOPersistentVolumeSource", keep=True),
        20: _f("local", "msg", "LocalVolumeSource", keep=True),
        21: _f("storageos", "msg", "StorageOSPersistentVolumeSource", keep=True),
        22: _f("csi", "msg", "CSIPersistentVolumeSource", keep=True),
    },
    "VolumeNodeAffinity": {
        1: _f("required", "msg", "NodeSelector", keep=True),
    },
    "TopologySelectorLabelRequirement": {
        1: _f("key", "str", keep=True),
        2: _f("values", "str", repeated=True),
    },
    "GlusterfsPersistentVolumeSource": {
        1: _f("endpoints", "str", keep=True),
        2: _f("path", "str", keep=True),
        3: _f("readOnly", "bool"),
        4: _f("endpointsNamespace", "str", keep=True),
    },
    "RBDPersistentVolumeSource": {
        1: _f("monitors", "str", repeated=True),
        2: _f("image", "str", keep=True),
        3: _f("fsType", "str"),
        4: _f("pool", "str"),
        5: _f("user", "str"),
        6: _f("keyring", "str"),
        7: _f("secretRef", "msg", "SecretReference", keep=True),
        8: _f("readOnly", "bool"),
    },
    "ISCSIPersistentVolumeSource": {
        1: _f("targetPortal", "str", keep=True),
        2: _f("iqn", "str", keep=True),
        3: _f("lun", "int", keep=True),
        4: _f("iscsiInterface", "str"),
        5: _f("fsType", "str"),
        6: _f("readOnly", "bool"),
        7: _f("portals", "str", repeated=True),
        8: _f("chapAuthDiscovery", "bool"),
        11: _f("chapAuthSession", "bool"),
        10: _f("secretRef", "msg", "SecretReference", keep=True),
        12: _f("initiatorName", "str", keep=True),
    },
    "CinderPersistentVolumeSource": {
        1: _f("volumeID", "str", keep=True),
        2: _f("fsType", "str"),
        3: _f("readOnly", "bool"),
        4: _f("secretRef", "msg", "SecretReference", keep=True),
    },
    "CephFSPersistentVolumeSource": {
        1: _f("monitors", "str", repeated=True),
        2: _f("path", "str"),
        3: _f("user", "str"),
        4: _f("secretFile", "str"),
        5: _f("secretRef", "msg", "SecretReference", keep=True),
        6: _f("readOnly", "bool"),
    },
    "FlexPersistentVolumeSource": {
        1: _f("driver", "str", keep=True),
        2: _f("fsType", "str"),
        3: _f("secretRef", "msg", "SecretReference", keep=True),
        4: _f("readOnly", "bool"),
        5: _f("options", "map", "str"),
    },
    "AzureFilePersistentVolumeSource": {
        1: _f("secretName", "str", keep=True),
        2: _f("shareName", "str", keep=True),
        3: _f("readOnly", "bool"),
        4: _f("secretNamespace", "str", keep=True),
    },
    "ScaleIOPersistentVolumeSource": {
        1: _f("gateway", "str", keep=True),
        2: _f("system", "str", keep=True),
        3: _f("secretRef", "msg", "SecretReference", keep=True),
        4: _f("sslEnabled", "bool"),
        5: _f("protectionDomain", "str"),
        6: _f("storagePool", "str"),
        7: _f("storageMode", "str"),
        8: _f("volumeName", "str"),
        9: _f("fsType", "str"),
        10: _f("readOnly", "bool"),
    },
    "LocalVolumeSource": {
        1: _f("path", "str", keep=True),
        2: _f("fsType", "str", keep=True),
    },
    "StorageOSPersistentVolumeSource": {
        1: _f("volumeName", "str"),
        2: _f("volumeNamespace", "str"),
        3: _f("fsType", "str"),
        4: _f("readOnly", "bool"),
        5: _f("secretRef", "msg", "ObjectReference", keep=True),
    },
    "CSIPersistentVolumeSource": {
        1: _f("driver", "str", keep=True),
        2: _f("volumeHandle", "str", keep=True),
        3: _f("readOnly", "bool"),
        4: _f("fsType", "str"),
        5: _f("volumeAttributes", "map", "str"),
        6: _f("controllerPublishSecretRef", "msg", "SecretReference", keep=True),
        7: _f("nodeStageSecretRef", "msg", "SecretReference", keep=True),
        8: _f("nodePublishSecretRef", "msg", "SecretReference", keep=True),
        9: _f("controllerExpandSecretRef", "msg", "SecretReference", keep=True),
        10: _f("nodeExpandSecretRef", "msg", "SecretReference", keep=True),
    },
    "SecretReference": {
        1: _f("name", "str"),
        2: _f("namespace", "str"),
    },
}
